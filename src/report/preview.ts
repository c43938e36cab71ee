// A file's preview before it is sent (a file held for approval, SMSDROP_APPROVAL): what the dry
// run shows, read from the journal where the file is planned: its counts, the messages to send
// (groups, numbers, requests), the billable segments when the templates file gives the texts, and
// their cost when a price is set. Shown by `smsdrop status`, /api/files/ID, the dashboard and the
// file.held webhook event.
import type { Config } from '../config/index.js';
import { type MessageSample, previewMessages } from '../pipeline/messages.js';
import type { ReadStore } from '../ports/index.js';
import { type Cost, costText, planCost } from './cost.js';

export interface FilePreview {
  rows: number;
  invalid: number;
  duplicates: number;
  repeats: number;
  /** What is left to send: its groups (one message each), numbers and requests. */
  groups: number;
  numbers: number;
  requests: number;
  /** Segments the provider bills; null without a templates file (the texts are not known). */
  billableSegments: number | null;
  cost: Cost | null;
  /** The first messages as recipients read them (with a templates file). */
  sample: MessageSample[];
}

type PreviewReads = Pick<ReadStore, 'fileLine' | 'groupsToSend' | 'repeatsOf'>;
type PreviewConfig = Pick<Config, 'templates' | 'maxPerRequest' | 'pricePerSegment' | 'currency'>;

export async function previewOf(
  reads: PreviewReads,
  fileId: number,
  config: PreviewConfig,
): Promise<FilePreview> {
  const line = await reads.fileLine(fileId);
  let groups = 0;
  let numbers = 0;
  let requests = 0;
  // The planner sends each group in the fewest requests of at most maxPerRequest numbers.
  for await (const page of reads.groupsToSend(fileId))
    for (const group of page) {
      groups++;
      numbers += group.numbers;
      requests += Math.ceil(group.numbers / config.maxPerRequest);
    }
  const messages = config.templates
    ? await previewMessages(reads, fileId, config.templates)
    : undefined;
  const billableSegments = messages?.billableSegments ?? null;
  return {
    rows: line.rows,
    invalid: line.invalid,
    duplicates: line.duplicates,
    repeats: await reads.repeatsOf(fileId),
    groups,
    numbers,
    requests,
    billableSegments,
    cost: planCost({ numbers }, billableSegments ?? undefined, config) ?? null,
    sample: messages?.sample ?? [],
  };
}

/** The preview in one line: the log, the webhook event. */
export function previewText(p: FilePreview): string {
  const parts = [
    `${p.rows} rows (${p.invalid} invalid, ${p.duplicates} duplicates, ${p.repeats} repeats)`,
    `${p.numbers} numbers to send in ${p.requests} requests, ${p.groups} messages`,
    ...(p.billableSegments === null ? [] : [`${p.billableSegments} billable segments`]),
    ...(p.cost ? [`cost ${costText(p.cost)}`] : []),
  ];
  return parts.join('; ');
}

/** The preview as `smsdrop status` prints it under the file. */
export function previewLines(p: FilePreview): string[] {
  return [
    `  preview: ${previewText(p)}`,
    ...p.sample
      .slice(0, 3)
      .map((s) => `  message (template ${s.templateId}, ${s.numbers} numbers): ${s.message}`),
  ];
}
