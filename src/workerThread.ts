// Starting a worker thread from a module of this program, built (.js) or run from the sources
// (.ts, as the tests do through tsx): Node 20 cannot load a .ts worker by itself, so the worker
// then first registers tsx's loader, and imports the module after.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the module `name` next to `base` (an import.meta.url), with base's own extension, as a
 * worker.
 */
export function startWorker(base: string, name: string, options: WorkerOptions): Worker {
  const entry = new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}
