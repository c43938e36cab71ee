// The dry run's view of the messages themselves, when the templates file gives their texts: a
// sample of the messages as recipients will read them, each with its SMS segments, and what the
// whole file costs in segments (each group's segments times its numbers). Read from the plan in
// the journal, so it counts exactly the numbers a real run would send.
import { render, segmentsOf, type TemplateBook } from '../config/templates.js';
import type { GroupToSend, ReadStore } from '../ports/index.js';

/** Groups shown in the sample, at most: enough to read the messages, not a list of thousands. */
export const MESSAGE_SAMPLE = 10;

export interface MessageSample {
  templateId: string;
  message: string;
  segments: number;
  numbers: number;
}

export interface MessagesPreview {
  templatesFile: string;
  /** The first groups of the file, in the order they were read. */
  sample: MessageSample[];
  groups: number;
  numbers: number;
  /** Segments the provider bills for the file: each group's segments times its numbers. */
  billableSegments: number;
}

export async function previewMessages(
  reads: Pick<ReadStore, 'groupsToSend'>,
  fileId: number,
  templates: TemplateBook,
): Promise<MessagesPreview> {
  const preview: MessagesPreview = {
    templatesFile: templates.file,
    sample: [],
    groups: 0,
    numbers: 0,
    billableSegments: 0,
  };
  for await (const page of reads.groupsToSend(fileId))
    for (const group of page) addGroup(preview, group, templates);
  return preview;
}

function addGroup(preview: MessagesPreview, group: GroupToSend, templates: TemplateBook): void {
  const template = templates.byId.get(group.templateId);
  if (!template) return; // intake made such rows invalid: no group holds them
  const message = render(template, JSON.parse(group.datas) as string[]);
  const segments = segmentsOf(message);
  preview.groups++;
  preview.numbers += group.numbers;
  preview.billableSegments += segments * group.numbers;
  if (preview.sample.length < MESSAGE_SAMPLE)
    preview.sample.push({
      templateId: group.templateId,
      message,
      segments,
      numbers: group.numbers,
    });
}

/** The preview as the dry run prints it. */
export function previewLines(preview: MessagesPreview): string[] {
  const shown =
    preview.groups > preview.sample.length
      ? `the first ${preview.sample.length} of ${preview.groups} messages`
      : `${preview.groups} message(s)`;
  const lines = [`messages (texts from ${preview.templatesFile}), ${shown}:`];
  for (const s of preview.sample) {
    lines.push(
      `  template ${s.templateId}, ${s.numbers} number(s), ${s.segments} segment(s): ${s.message}`,
    );
  }
  lines.push(
    `billable segments: ${preview.billableSegments} (segments × numbers over ${preview.groups} message(s) to ${preview.numbers} number(s); 70 UTF-16 units make one segment, 67 each beyond, an emoji counting two)`,
  );
  return lines;
}
