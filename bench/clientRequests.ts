// `node --import tsx bench/clientRequests.ts [ROOT] [REQUESTS]`: the provider client's CPU per
// request, alone. Sends REQUESTS (default 20,000) requests of 200 numbers each, 8 at a time,
// through ROOT's src/provider/client.ts (default this checkout) to a bare HTTP/1.1 answerer in the
// same process: it finds each request's end by its Content-Length and writes one canned success,
// so nearly all the process's CPU is the client's (signing, encoding, undici, decoding). Timed from
// outside as a whole process, two checkouts in turn (e.g. the commit before a change, extracted
// with `git archive`, against this one): the ratio of their CPU is the change's.
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const REQUESTS = Number(process.argv[3] ?? 20_000);
const CONCURRENCY = 8;
const ANSWER =
  '{"statusCode":"000000","templateSMS":{"smsMessageSid":"0123456789abcdef0123456789abcdef","dateCreated":"20261127120000"}}';
const RESPONSE = Buffer.from(
  `HTTP/1.1 200 OK\r\ncontent-type: application/json;charset=utf-8\r\ncontent-length: ${ANSWER.length}\r\nconnection: keep-alive\r\n\r\n${ANSWER}`,
);

/** Answers each complete request on the connection with RESPONSE. */
function answerer(socket: net.Socket): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = pending.subarray(0, end).toString('latin1');
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < end + 4 + length) return;
      pending = pending.subarray(end + 4 + length);
      socket.write(RESPONSE);
    }
  });
}

async function main(): Promise<void> {
  const server = net.createServer(answerer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const { createProviderClient } = (await import(
    pathToFileURL(path.join(ROOT, 'src/provider/client.ts')).href
  )) as typeof import('../src/provider/client.js');
  const client = createProviderClient({
    baseUrl: `http://127.0.0.1:${port}`,
    accountSid: 'ACbench0000000000000000000000001',
    authToken: 'benchtoken000000000000000000001',
    format: 'json',
    maxPerRequest: 200,
    connectTimeoutMs: 10_000,
    responseTimeoutMs: 10_000,
    connections: CONCURRENCY,
  });
  const to = Array.from({ length: 200 }, (_, i) => String(13800000000 + i));
  const datas = ['双十一大促', '8折'];
  let next = 0;
  let accepted = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      const reqId = `bench-${next++}`;
      const outcome = await client.send({
        to,
        appId: 'APPbench000000000000000000000001',
        templateId: '1',
        datas,
        reqId,
      });
      if (outcome.kind === 'accepted') accepted++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await client.close();
  server.close();
  if (accepted !== REQUESTS) throw new Error(`${accepted} of ${REQUESTS} accepted`);
}

await main();
