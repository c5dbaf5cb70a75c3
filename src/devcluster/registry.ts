// A local OCI registry for tests, benchmarks and `tessera dev up`: CNCF distribution v3's `registry`, built from
// the Go module proxy by hack/build-binaries.sh like the control plane, on 127.0.0.1, TLS from a fresh CA, with
// htpasswd auth (bcrypt lines written here), token auth (an in-process token issuer whose signing certificate the
// registry trusts, so the whole Bearer flow is real), or none. The registry runs detached with
// its output (including the access log) in <stateDir>/registry.log; stop() ends it. In token mode the issuer
// lives in this process, so the registry is usable only while this process runs.
import { createPrivateKey, randomBytes, randomUUID, sign } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import { binaryPaths, requireBinaries } from './binaries.js';
import { DevClusterError } from './errors.js';
import { createCertificateAuthority } from './pki.js';
import {
  freePort,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
  type ComponentProcess,
} from './processes.js';
import type { Blob, BuiltImage } from './registry-images.js';

export type RegistryAuthMode = 'htpasswd' | 'token' | 'none';

export interface LocalRegistryOptions {
  /** Directory for config, certificates, storage and the log; created if missing. */
  readonly stateDir: string;
  /** Default: 'htpasswd'. */
  readonly auth?: RegistryAuthMode;
  /** User name -> password. Default: one user `tessera` with a random password. */
  readonly users?: Readonly<Record<string, string>>;
  /** Registry port. Default: a free port. */
  readonly port?: number;
  /** The registry binary. Default: the one hack/build-binaries.sh built (`npm run binaries -- registry`). */
  readonly binary?: string;
  /** Token lifetime in seconds (token mode). Default: 300. */
  readonly tokenLifetimeSeconds?: number;
  /** Token mode: let anonymous clients pull. Default: false. */
  readonly anonymousPull?: boolean;
  /** Start-up timeout in ms. Default: 15_000. */
  readonly startTimeoutMs?: number;
}

export interface AccessLogEntry {
  readonly method: string;
  /** Request path with query. */
  readonly path: string;
  readonly status: number;
}

export interface TokenRequest {
  readonly subject: string;
  readonly scopes: readonly string[];
  /** HTTP status the issuer answered. */
  readonly status: number;
}

export interface LocalRegistry {
  /** `127.0.0.1:PORT`, the registry part of image references. */
  readonly host: string;
  readonly auth: RegistryAuthMode;
  /** PEM of the CA that signed the registry's serving certificate. */
  readonly caCertPem: string;
  /** File holding caCertPem. */
  readonly caFile: string;
  /** First configured user (empty strings in 'none' mode). */
  readonly username: string;
  readonly password: string;
  readonly users: Readonly<Record<string, string>>;
  /** Token endpoint (token mode only). */
  readonly tokenRealm: string | undefined;
  readonly logFile: string;
  /** Process id of the registry (detached; record it to stop the registry from another process). */
  readonly pid: number;
  /** `{"auths": {...}}` for `user` (default: the first user), as in a kubernetes.io/dockerconfigjson secret. */
  dockerConfigJson(user?: string): string;
  /** Uploads a blob to `repository` (skipped when present). */
  pushBlob(repository: string, blob: Blob): Promise<void>;
  /** Uploads a manifest under `reference` (tag or digest) and returns its digest. */
  pushManifest(repository: string, reference: string, manifest: Blob): Promise<string>;
  /** Uploads an image or index with everything it references, tagged `tag`; returns the top-level digest. */
  pushImage(repository: string, tag: string, image: BuiltImage): Promise<string>;
  /** Requests the registry has logged so far (from its access log). */
  accessLog(): AccessLogEntry[];
  /** Token requests the issuer answered (token mode): authenticated user ('' = anonymous) and scopes asked. */
  tokenRequests(): readonly TokenRequest[];
  stop(): Promise<void>;
}

const service = 'tessera-local-registry';
const issuer = 'tessera-local-token-issuer';

/**
 * One htpasswd line with a bcrypt hash, as `htpasswd -nbB` writes it. Cost 5 is htpasswd's own default for -B:
 * the registry checks the hash on every request, and these are throwaway loopback credentials.
 */
export function htpasswdLine(user: string, password: string): string {
  return `${user}:${bcrypt.hashSync(password, 5)}`;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function pemToDerBase64(pem: string): string {
  return pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

interface Access {
  readonly type: string;
  readonly name: string;
  readonly actions: readonly string[];
}

function parseScopes(scopes: readonly string[]): Access[] {
  return scopes.flatMap((scope) =>
    scope.split(' ').flatMap((one) => {
      const parts = one.split(':');
      if (parts.length < 3) return [];
      const actions = (parts.pop() ?? '').split(',').filter(Boolean);
      const type = parts.shift() ?? '';
      return [{ type, name: parts.join(':'), actions }];
    }),
  );
}

export async function startLocalRegistry(options: LocalRegistryOptions): Promise<LocalRegistry> {
  const auth = options.auth ?? 'htpasswd';
  const stateDir = path.resolve(options.stateDir);
  mkdirSync(path.join(stateDir, 'storage'), { recursive: true });
  const users = options.users ?? { tessera: randomBytes(12).toString('hex') };
  const [username = '', password = ''] = auth === 'none' ? [] : (Object.entries(users)[0] ?? []);
  const binary = options.binary ?? requireBinaries(binaryPaths(), ['registry']).registry;
  const port = options.port ?? (await freePort());
  const host = `127.0.0.1:${port}`;

  const ca = await createCertificateAuthority('tessera-local-registry-ca');
  const serving = await ca.issue({
    commonName: 'tessera-local-registry',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
    usage: 'server',
  });
  const caFile = path.join(stateDir, 'ca.crt');
  writeFileSync(caFile, ca.certPem);
  writeFileSync(path.join(stateDir, 'tls.crt'), serving.certPem);
  writeFileSync(path.join(stateDir, 'tls.key'), serving.keyPem, { mode: 0o600 });

  let authConfig = '';
  let tokenRealm: string | undefined;
  let issuerServer: https.Server | undefined;
  let mintToken: ((subject: string, access: readonly Access[]) => string) | undefined;
  const tokenRequests: TokenRequest[] = [];
  if (auth === 'htpasswd') {
    const file = path.join(stateDir, 'htpasswd');
    writeFileSync(
      file,
      Object.entries(users)
        .map(([u, p]) => htpasswdLine(u, p))
        .join('\n') + '\n',
    );
    authConfig = `auth:\n  htpasswd:\n    realm: tessera-local-registry\n    path: ${file}\n`;
  } else if (auth === 'token') {
    const signing = await ca.issue({ commonName: issuer, usage: 'server' });
    const signingKey = createPrivateKey(signing.keyPem);
    const x5c = [pemToDerBase64(signing.certPem)];
    const lifetime = options.tokenLifetimeSeconds ?? 300;
    mintToken = (subject, access) => {
      const now = Math.floor(Date.now() / 1000);
      const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ES256', x5c }));
      const claims = b64url(
        JSON.stringify({
          iss: issuer,
          sub: subject,
          aud: service,
          exp: now + lifetime,
          nbf: now - 10,
          iat: now,
          jti: randomUUID(),
          access,
        }),
      );
      const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
        key: signingKey,
        dsaEncoding: 'ieee-p1363',
      });
      return `${header}.${claims}.${b64url(signature)}`;
    };
    const issuerPort = await freePort();
    tokenRealm = `https://127.0.0.1:${issuerPort}/token`;
    const mint = mintToken;
    issuerServer = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const url = new URL(req.url ?? '/', tokenRealm);
      if (url.pathname !== '/token') {
        res.writeHead(404).end();
        return;
      }
      let subject = '';
      const header = req.headers.authorization ?? '';
      if (header.startsWith('Basic ')) {
        const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        const user = decoded.slice(0, colon);
        if (colon < 0 || users[user] === undefined || users[user] !== decoded.slice(colon + 1)) {
          tokenRequests.push({ subject: user, scopes: url.searchParams.getAll('scope'), status: 401 });
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
          return;
        }
        subject = user;
      }
      tokenRequests.push({ subject, scopes: url.searchParams.getAll('scope'), status: 200 });
      const requested = parseScopes(url.searchParams.getAll('scope'));
      const granted = requested
        .map((a) => ({
          ...a,
          actions:
            subject !== '' ? a.actions : options.anonymousPull ? a.actions.filter((x) => x === 'pull') : [],
        }))
        .filter((a) => a.actions.length > 0);
      const token = mint(subject, granted);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          token,
          access_token: token,
          expires_in: lifetime,
          issued_at: new Date().toISOString(),
        }),
      );
    });
    const server = issuerServer;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(issuerPort, '127.0.0.1', () => resolve());
    });
    authConfig =
      `auth:\n  token:\n    realm: ${tokenRealm}\n    service: ${service}\n    issuer: ${issuer}\n` +
      `    rootcertbundle: ${caFile}\n`;
  }

  const configFile = path.join(stateDir, 'config.yml');
  writeFileSync(
    configFile,
    `version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: false\n` +
      `storage:\n  filesystem:\n    rootdirectory: ${path.join(stateDir, 'storage')}\n  delete:\n    enabled: true\n` +
      `http:\n  addr: ${host}\n  secret: ${randomBytes(16).toString('hex')}\n` +
      `  tls:\n    certificate: ${path.join(stateDir, 'tls.crt')}\n    key: ${path.join(stateDir, 'tls.key')}\n` +
      authConfig,
  );

  const logFile = path.join(stateDir, 'registry.log');
  writeFileSync(logFile, '');
  const dispatcher = new Agent({ connect: { ca: ca.certPem } });
  let child: ComponentProcess | undefined;
  const stop = async (): Promise<void> => {
    if (child !== undefined) await stopProcess(child);
    child = undefined;
    await new Promise<void>((resolve) => (issuerServer ? issuerServer.close(() => resolve()) : resolve()));
    issuerServer?.closeAllConnections();
    await dispatcher.close();
  };
  try {
    child = spawnComponent({ name: 'registry', binary, args: ['serve', configFile], logFile });
    const probe = async (): Promise<boolean> => {
      const res = await request(`https://${host}/v2/`, { dispatcher });
      await res.body.dump();
      return res.statusCode === 200 || res.statusCode === 401;
    };
    await waitUntilHealthy(child, probe, options.startTimeoutMs ?? 15_000);
  } catch (err) {
    await stop();
    throw err;
  }

  const basic = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const authorizationFor = (repository: string): string | undefined => {
    if (auth === 'htpasswd') return basic;
    if (mintToken !== undefined)
      return `Bearer ${mintToken(username, [{ type: 'repository', name: repository, actions: ['pull', 'push'] }])}`;
    return undefined;
  };
  const call = async (
    method: 'GET' | 'HEAD' | 'POST' | 'PUT',
    url: string,
    repository: string,
    body?: Buffer,
    contentType?: string,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> => {
    const headers: Record<string, string> = {};
    const authorization = authorizationFor(repository);
    if (authorization !== undefined) headers.authorization = authorization;
    if (contentType !== undefined) headers['content-type'] = contentType;
    const res = await request(url, { method, headers, body, dispatcher });
    const text = method === 'HEAD' ? '' : await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  };
  const fail = (what: string, status: number, text: string): never => {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_START_FAILED',
      `local registry: ${what} failed with HTTP ${status}: ${text.slice(0, 300)}`,
    );
  };

  const pushBlob = async (repository: string, blob: Blob): Promise<void> => {
    const head = await call('HEAD', `https://${host}/v2/${repository}/blobs/${blob.digest}`, repository);
    if (head.status === 200) return;
    const start = await call('POST', `https://${host}/v2/${repository}/blobs/uploads/`, repository);
    const location = start.headers.location;
    if (start.status !== 202 || typeof location !== 'string')
      return fail(`starting a blob upload to ${repository}`, start.status, start.text);
    const target = new URL(location, `https://${host}`);
    target.searchParams.set('digest', blob.digest);
    const put = await call('PUT', target.href, repository, blob.bytes, 'application/octet-stream');
    if (put.status !== 201) fail(`uploading blob ${blob.digest} to ${repository}`, put.status, put.text);
  };
  const pushManifest = async (repository: string, reference: string, manifest: Blob): Promise<string> => {
    const put = await call(
      'PUT',
      `https://${host}/v2/${repository}/manifests/${reference}`,
      repository,
      manifest.bytes,
      manifest.mediaType,
    );
    if (put.status !== 201) fail(`pushing manifest ${repository}:${reference}`, put.status, put.text);
    return manifest.digest;
  };
  const pushTree = async (repository: string, image: BuiltImage): Promise<void> => {
    for (const childImage of image.children) {
      await pushTree(repository, childImage);
      await pushManifest(repository, childImage.manifest.digest, childImage.manifest);
    }
    for (const blob of image.blobs) await pushBlob(repository, blob);
  };

  const pid = child.pid;
  return {
    host,
    pid,
    auth,
    caCertPem: ca.certPem,
    caFile,
    username,
    password,
    users: auth === 'none' ? {} : users,
    tokenRealm,
    logFile,
    dockerConfigJson(user = username): string {
      const secret = users[user] ?? '';
      return JSON.stringify({
        auths: { [host]: { auth: Buffer.from(`${user}:${secret}`).toString('base64') } },
      });
    },
    pushBlob,
    pushManifest,
    async pushImage(repository: string, tag: string, image: BuiltImage): Promise<string> {
      await pushTree(repository, image);
      return pushManifest(repository, tag, image.manifest);
    },
    accessLog(): AccessLogEntry[] {
      if (!existsSync(logFile)) return [];
      const entries: AccessLogEntry[] = [];
      for (const match of readFileSync(logFile, 'utf8').matchAll(
        /"(GET|HEAD|POST|PUT|PATCH|DELETE) (\S+) HTTP\/[\d.]+" (\d{3})/g,
      )) {
        entries.push({ method: match[1] ?? '', path: match[2] ?? '', status: Number(match[3]) });
      }
      return entries;
    },
    tokenRequests: () => [...tokenRequests],
    stop,
  };
}
