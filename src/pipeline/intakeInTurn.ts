// A file read into the journal in its turn (IntakeTurns), and read again in the turn that waits
// for every other file when the journal let it be read beside another node's file and then
// refused it (E_INTAKE_TURN_YIELDED: the two files hold the same message for a number).
import type { RepeatWindow } from '../config/settings/durations.js';
import { hasCode } from '../errors.js';
import type { FileInspection } from '../intake/inspect.js';
import type { FileRecord } from '../ports/index.js';
import type { PipelineContext } from './context.js';
import { intake, type ReadWhole, type Refusal } from './intakeRun.js';
import type { ProcessOptions } from './processOptions.js';

/**
 * The file read into the journal once the intakes before it have ended theirs (IntakeTurns): its
 * refusal, 'stopped' when a stop came while waiting, or what still sends beside it (ReadWhole).
 */
export async function intakeInTurn(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
): Promise<Refusal | 'stopped' | ReadWhole> {
  try {
    return await intakeInOneTurn(ctx, file, filePath, inspection, options, {
      bytes: inspection.size,
    });
  } catch (error) {
    // Read beside another node's file, whose rows it met (a PostgreSQL journal): read again,
    // in the turn that waits for that file to be read.
    if (!hasCode(error, 'E_INTAKE_TURN_YIELDED')) throw error;
    return intakeInOneTurn(ctx, file, filePath, inspection, options, {});
  }
}

async function intakeInOneTurn(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
  wish: { bytes?: number },
): Promise<Refusal | 'stopped' | ReadWhole> {
  const turnOver = await ctx.turns.next(ctx.stopSignal, wish);
  try {
    // A stop that came while another file was read: this one is read at the next start.
    if (ctx.stopSignal?.aborted) return 'stopped';
    const sentBefore = options.resend
      ? undefined
      : await (
          options.sentBefore ??
          ((id) => ctx.reads.sentBefore(id, ctx.config.repeatWindow ?? NO_WINDOW))
        )(file.id);
    return await intake(ctx, file, filePath, inspection, {
      dryRun: options.dryRun === true,
      sentBefore,
      turnOver,
    });
  } finally {
    turnOver();
  }
}

const NO_WINDOW: RepeatWindow = { ms: 0, text: 'off' };
