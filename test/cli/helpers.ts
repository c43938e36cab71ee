// The real CLI as a child process, for the CLI tests: its exit status and its whole output.
import { spawn } from 'node:child_process';
import { CLI, cleanEnv, REPO } from '../daemon/helpers.js';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `smsdrop ARGS` in the repository, with `env` over an environment cleared of SMSDROP_*. */
export function smsdrop(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: REPO,
      env: cleanEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
