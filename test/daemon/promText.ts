// The Prometheus text format (version 0.0.4), checked strictly for the tests: every sample's
// family declared by one # TYPE before it, names and labels as the format allows them, label
// values escaped, numbers readable, no series twice, counters named _total. Where Debian's
// prometheus package is installed, `promtool check metrics` reads it too (CI installs it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const VALUE = '(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|NaN|[-+]Inf)';
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (${VALUE})(?: -?\\d+)?$`,
);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);

/** What is wrong with `text` as Prometheus text; empty when nothing is. */
export function expositionProblems(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  const seen = new Set<string>();
  if (!text.endsWith('\n')) problems.push('the text does not end with a line break');
  for (const line of text.replace(/\n$/, '').split('\n')) {
    const type = TYPE.exec(line);
    if (type) {
      if (types.has(type[1]!)) problems.push(`${type[1]}: # TYPE twice`);
      types.set(type[1]!, type[2]!);
      if (type[2] === 'counter' && !type[1]!.endsWith('_total'))
        problems.push(`${type[1]}: a counter not named _total`);
      continue;
    }
    if (HELP.test(line) || line === '') continue; // the format ignores empty lines
    const sample = SAMPLE.exec(line);
    if (!sample) {
      problems.push(`not a sample, # HELP or # TYPE line: ${line}`);
      continue;
    }
    const [, name, labels = ''] = sample;
    const family = [name!, name!.replace(/_(bucket|sum|count)$/, '')].find((n) => types.has(n));
    if (!family) problems.push(`${name}: no # TYPE before its sample`);
    const series = `${name}{${labels
      .split(/,(?=[a-zA-Z_])/)
      .sort()
      .join(',')}}`;
    if (seen.has(series)) problems.push(`${series}: twice`);
    seen.add(series);
  }
  return problems;
}

/**
 * `promtool check metrics`'s complaints, or undefined where promtool is not installed (in CI, a
 * missing one is a complaint: .ci/run installs it).
 */
export function promtoolProblems(text: string): string | undefined {
  if (!fs.existsSync('/usr/bin/promtool'))
    return process.env.CI === 'true'
      ? '/usr/bin/promtool is missing: apt-get install -y prometheus (.ci/run does)'
      : undefined;
  const run = spawnSync('/usr/bin/promtool', ['check', 'metrics'], {
    input: text,
    encoding: 'utf8',
  });
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}`.trim() || `exit ${run.status}`;
}
