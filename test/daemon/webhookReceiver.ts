// A webhook receiver for the tests: node:http on 127.0.0.1, any free port. It checks each POST's
// X-Smsdrop-Signature against the raw body, keeps what it accepted, and can be "down" (answers
// 503) until told otherwise.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEvent {
  id: number;
  event: string;
  at: string;
  file: {
    id: number | null;
    name: string;
    status: string;
    counts: Record<string, number> | null;
  } | null;
  reason?: string;
}

export interface Receiver {
  url: string;
  /** Events accepted (signature right), in arrival order. */
  events: ReceivedEvent[];
  /** POSTs refused: while down, or with a wrong signature. */
  refused: number;
  badSignatures: number;
  down: boolean;
  close(): Promise<void>;
}

export async function startReceiver(
  secret: string,
  options: { down?: boolean } = {},
): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    events: [],
    refused: 0,
    badSignatures: 0,
    down: options.down ?? false,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
      if (req.headers['x-smsdrop-signature'] !== expected) receiver.badSignatures++;
      if (receiver.down || req.headers['x-smsdrop-signature'] !== expected) {
        receiver.refused++;
        res.writeHead(503).end();
        return;
      }
      receiver.events.push(JSON.parse(raw.toString('utf8')) as ReceivedEvent);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
