// A webhook receiver for the tests: node:http on 127.0.0.1, any free port. It checks each POST
// as docs/dashboard.md tells a receiver to (X-Smsdrop-Signature over "X-Smsdrop-Timestamp.BODY",
// a timestamp of the last 5 minutes), keeps what it accepted with its delivery id, and can be
// "down" (answers 503) until told otherwise.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEvent {
  id: string;
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
  /** The X-Smsdrop-Delivery header of every POST. */
  deliveries: string[];
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
    deliveries: [],
    refused: 0,
    badSignatures: 0,
    down: options.down ?? false,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers['x-smsdrop-timestamp']);
      const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`;
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
      const signedRight = req.headers['x-smsdrop-signature'] === expected && fresh;
      receiver.deliveries.push(String(req.headers['x-smsdrop-delivery']));
      if (!signedRight) receiver.badSignatures++;
      if (receiver.down || !signedRight) {
        receiver.refused++;
        res.writeHead(503).end();
        return;
      }
      receiver.events.push(JSON.parse(raw) as ReceivedEvent);
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
