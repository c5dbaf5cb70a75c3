// A loopback HTTPS server with a scripted handler, for the faults a real registry cannot be made to produce
// (429 with Retry-After, 5xx bursts, stalls, lying digests, redirect loops, foreign token realms). Its
// certificate comes from a fresh test CA, so clients trust it only when given `caCertPem`. Records requests.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority } from '../../../src/runtime/index.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
}

export interface FakeServer {
  /** `127.0.0.1:PORT` */
  readonly host: string;
  readonly caCertPem: string;
  readonly requests: RecordedRequest[];
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

export async function startFakeServer(): Promise<FakeServer> {
  const ca = await createCertificateAuthority('fake-registry-ca');
  const leaf = await ca.issue({
    commonName: 'fake',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
    usage: 'server',
  });
  const requests: RecordedRequest[] = [];
  const fake: FakeServer = {
    host: '',
    caCertPem: ca.certPem,
    requests,
    handler: (_req, res) => res.writeHead(404).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
    });
    fake.handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  Object.assign(fake, { host: `127.0.0.1:${port}` });
  return fake;
}
