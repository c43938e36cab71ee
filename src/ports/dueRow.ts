// A due batch as both journals' claim queries return it (the batch's columns, and its group's and
// numbers' prefixed g_), and the port's BatchToSend made of it.
import type { BatchRecord, BatchToSend } from './records.js';

export type DueRow = BatchRecord & {
  g_app_id: string;
  g_template_id: string;
  g_datas: string;
  g_phones: string;
};

export function toBatchToSend({
  g_app_id,
  g_template_id,
  g_datas,
  g_phones,
  ...batch
}: DueRow): BatchToSend {
  return {
    batch,
    appId: g_app_id,
    templateId: g_template_id,
    datas: JSON.parse(g_datas) as string[],
    phones: g_phones,
  };
}
