// What an operator is told when this process takes over another's work on a shared journal: a node
// that died, or was cut off or stopped past its lease, left batches or a file's reading, and this
// one goes on with them. One log line and one webhook event (file.taken_over) per takeover, each
// naming the file, what was taken and the node it was taken from: the only trace, besides the
// journal, that a node was lost.
import type { Logger } from '../log/logger.js';
import { describeError } from '../log/redact.js';
import type { JournalHandle, TakeOver } from '../ports/index.js';

/** Tells the log and the webhook receivers of each takeover the journal's stores report. */
export function reportTakeovers(journal: JournalHandle, node: string, log: Logger): void {
  const tell = (takeover: TakeOver) => void told(journal, node, log, takeover);
  journal.send.whenTakenOver?.(tell);
  journal.files.whenTakenOver?.(tell);
}

async function told(
  journal: JournalHandle,
  node: string,
  log: Logger,
  { fileId, from, what }: TakeOver,
): Promise<void> {
  try {
    const file = await journal.files.file(fileId);
    const name = `${file?.name ?? '?'} (file ${fileId})`;
    const taken =
      what === 'reading'
        ? `the reading of ${name} from node ${from}, whose claim on it passed`
        : `${what} batch(es) of ${name} from node ${from}, whose lease passed`;
    log.info(`node ${node} took over ${taken}`, { event: 'taken-over' });
    if (journal.outbox.hasTargets())
      await journal.outbox.recordEventNow(
        'file.taken_over',
        fileId,
        what === 'reading'
          ? `node ${node} reads it, taken over from node ${from}`
          : `node ${node} took over ${what} batch(es) from node ${from}`,
      );
  } catch (err) {
    log.warn(`cannot report a takeover from node ${from}: ${describeError(err)}`);
  }
}
