// The import graph of src/ (issue 31): which files and which folders import which, and the
// circles among them (strongly connected sets of two or more). By default value imports only
// (`import type` and all-`type` specifier lists vanish at run time); with `types`, type imports
// too (a circle of types alone still ties the files' vocabularies together). A file directly in
// src/ (errors.ts, cli.ts) counts as a folder of its own. test/imports.test.ts reads the same
// graphs and fails on a circle it does not know.
//   node scripts/importGraph.mjs            the circles and the two-folder circles, both graphs
//   node scripts/importGraph.mjs --edges    also every folder edge with the imports that make it
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// `[^;]`: an import's specifiers hold no semicolon, so a match never runs on from an earlier
// statement to a later import.
const FROM = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*['"](\.[^'"]+)['"]/g;
const BARE = /(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]/g;

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') ? [file] : [];
  });
}

/** The folder of a path relative to src/ ('journal/open.ts' -> 'journal', 'cli.ts' -> 'cli'). */
export function folderOf(relative) {
  const parts = relative.split('/');
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') : parts[0];
}

/** Only types named: `{ type A, type B }` (a default or namespace import is a value). */
function typesOnly(specifiers) {
  const list = /^\{([\s\S]*)\}$/.exec(specifiers.trim());
  if (!list) return false;
  const names = list[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

function imports(text, types) {
  const targets = [];
  for (const [, typeKeyword, specifiers, target] of text.matchAll(FROM))
    if (types || (!typeKeyword && !typesOnly(specifiers))) targets.push(target);
  for (const [, target] of text.matchAll(BARE)) targets.push(target);
  return targets;
}

/**
 * file -> the files it imports as values (and, with `types`, as types), both as paths relative to
 * `root` with '/' ('journal/open.ts'). An import names the .js the build makes; the source is the
 * .ts beside it.
 */
export function fileGraph(root = path.resolve('src'), { types = false } = {}) {
  const edges = new Map();
  for (const file of sourceFiles(root)) {
    const from = path.relative(root, file).split(path.sep).join('/');
    const targets = new Set();
    for (const target of imports(readFileSync(file, 'utf8'), types)) {
      const resolved = path.resolve(path.dirname(file), target).replace(/\.js$/, '.ts');
      targets.add(path.relative(root, resolved).split(path.sep).join('/'));
    }
    edges.set(from, targets);
  }
  return edges;
}

/** folder -> folder -> the imports ("file -> target") that make the edge. */
export function folderGraph(files = fileGraph()) {
  const edges = new Map();
  for (const [file, targets] of files) {
    for (const target of targets) {
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const why = edges.get(from);
      if (!why.has(to)) why.set(to, []);
      why.get(to).push(`${file} -> ${target}`);
    }
  }
  return edges;
}

/**
 * Tarjan's strongly connected components with more than one member, each sorted. `edges` maps a
 * node to what it points at (a Set, or a Map keyed by the targets).
 */
export function circles(edges) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const found = [];
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const set = [];
    let member;
    do set.push((member = stack.pop()));
    while (member !== node);
    if (set.length > 1) found.push(set.sort());
  };
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

function main() {
  for (const types of [false, true]) {
    const kind = types ? 'value and type imports' : 'value imports';
    const files = fileGraph(undefined, { types });
    const edges = folderGraph(files);
    console.log(`file circles (${kind}):`);
    for (const set of circles(files)) console.log(`  {${set.join(', ')}}`);
    console.log(`folder circles (${kind}):`);
    for (const set of circles(edges)) console.log(`  {${set.join(', ')}}`);
    const pairs = [];
    for (const [from, to] of edges)
      for (const other of to.keys())
        if (from < other && edges.get(other)?.has(from)) pairs.push(`${from}<->${other}`);
    console.log(`two-folder circles (${kind}): ${pairs.join(', ') || 'none'}`);
    if (process.argv.includes('--edges'))
      for (const [from, to] of [...edges].sort())
        for (const [other, why] of [...to].sort())
          console.log(`${from} -> ${other}\n    ${why.join('\n    ')}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href)
  main();
