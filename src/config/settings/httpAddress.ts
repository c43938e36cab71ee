// Where the daemon's HTTP surface listens (SMSDROP_HTTP), as the setting is read; who may read it
// is http/address.ts.

/** The setting as read: `text` as written; host and port undefined when it is off. */
export interface HttpAddress {
  text: string;
  host?: string;
  port?: number;
}

/** "HOST:PORT" ("[::1]:7070" for IPv6), or off; the reason otherwise. */
export function parseHttpAddress(text: string): HttpAddress | string {
  const written = text.trim();
  if (written.toLowerCase() === 'off') return { text: 'off' };
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d{1,5})$/.exec(written);
  const port = Number(match?.[2]);
  if (!match || port > 65_535)
    return 'expected HOST:PORT (such as 127.0.0.1:7070, [::1]:7070 or 0.0.0.0:7070; port 0: any free port), or off';
  return { text: written, host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
