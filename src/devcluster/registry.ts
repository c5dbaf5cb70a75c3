// A local OCI registry for tests, benchmarks and `tessera dev up`: CNCF distribution v3's `registry`, built from
// the Go module proxy by hack/build-binaries.sh like the control plane, on 127.0.0.1, TLS from a fresh CA, with
// htpasswd auth (bcrypt lines written here), token auth (an in-process token issuer whose signing certificate the
// registry trusts, so the whole Bearer flow is real), or none. The registry runs detached with
// its output (including the access log) in <stateDir>/registry.log; stop() ends it. In token mode the issuer
// lives in this process, so the registry is usable only while this process runs.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import { binaryPaths, requireBinaries } from './binaries.js';
import { DevClusterError } from './errors.js';
import {
  createCertificateAuthority,
  type CertificateAuthority,
  type CertificatePem,
} from '../runtime/index.js';
import {
  freePort,
  spawnComponent,
  stopProcess,
  waitUntilHealthy,
  type ComponentProcess,
} from './processes.js';
import type { Blob, BuiltImage } from './registry-images.js';
import { TOKEN_ISSUER, TOKEN_SERVICE, TokenIssuer, type TokenRequest } from './registry-token-issuer.js';

export type { TokenRequest } from './registry-token-issuer.js';

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
  /**
   * More names for the serving certificate besides localhost, for clients that reach the registry by another
   * name (through a test proxy that resolves it to loopback). Default: none.
   */
  readonly extraDnsNames?: readonly string[];
}

export interface AccessLogEntry {
  readonly method: string;
  /** Request path with query. */
  readonly path: string;
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

/**
 * One htpasswd line with a bcrypt hash, as `htpasswd -nbB` writes it. Cost 5 is htpasswd's own default for -B:
 * the registry checks the hash on every request, and these are throwaway loopback credentials.
 */
export function htpasswdLine(user: string, password: string): string {
  return `${user}:${bcrypt.hashSync(password, 5)}`;
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
  const tls = await writeRegistryTls(stateDir, options.extraDnsNames ?? []);
  const { authConfig, issuer } = await configureAuth(auth, stateDir, users, tls, options);
  const configFile = writeRegistryConfig(stateDir, host, authConfig);
  const logFile = path.join(stateDir, 'registry.log');
  writeFileSync(logFile, '');
  const dispatcher = new Agent({ connect: { ca: tls.ca.certPem } });
  let child: ComponentProcess | undefined;
  const stop = async (): Promise<void> => {
    if (child !== undefined) await stopProcess(child);
    child = undefined;
    await issuer?.close();
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
  const authorizationFor = (repository: string): string | undefined => {
    if (auth === 'htpasswd') return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    if (issuer !== undefined)
      return `Bearer ${issuer.mint(username, [{ type: 'repository', name: repository, actions: ['pull', 'push'] }])}`;
    return undefined;
  };
  const pusher = new RegistryPusher(host, dispatcher, authorizationFor);
  return {
    host,
    pid: child.pid,
    auth,
    caCertPem: tls.ca.certPem,
    caFile: tls.caFile,
    username,
    password,
    users: auth === 'none' ? {} : users,
    tokenRealm: issuer?.realm,
    logFile,
    dockerConfigJson(user = username): string {
      const secret = users[user] ?? '';
      return JSON.stringify({
        auths: { [host]: { auth: Buffer.from(`${user}:${secret}`).toString('base64') } },
      });
    },
    pushBlob: (repository, blob) => pusher.pushBlob(repository, blob),
    pushManifest: (repository, reference, manifest) => pusher.pushManifest(repository, reference, manifest),
    pushImage: (repository, tag, image) => pusher.pushImage(repository, tag, image),
    accessLog: () => readAccessLog(logFile),
    tokenRequests: () => issuer?.tokenRequests() ?? [],
    stop,
  };
}

interface RegistryTls {
  readonly ca: CertificateAuthority;
  readonly caFile: string;
  readonly serving: CertificatePem;
}

/** A fresh CA (ca.crt) and the registry's serving certificate for 127.0.0.1, localhost and `extraDnsNames`. */
async function writeRegistryTls(stateDir: string, extraDnsNames: readonly string[]): Promise<RegistryTls> {
  const ca = await createCertificateAuthority('tessera-local-registry-ca');
  const serving = await ca.issue({
    commonName: 'tessera-local-registry',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost', ...extraDnsNames],
    usage: 'server',
  });
  const caFile = path.join(stateDir, 'ca.crt');
  writeFileSync(caFile, ca.certPem);
  writeFileSync(path.join(stateDir, 'tls.crt'), serving.certPem);
  writeFileSync(path.join(stateDir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  return { ca, caFile, serving };
}

/** The `auth:` section of the registry's config; in token mode also the started token issuer. */
async function configureAuth(
  auth: RegistryAuthMode,
  stateDir: string,
  users: Readonly<Record<string, string>>,
  tls: RegistryTls,
  options: LocalRegistryOptions,
): Promise<{ authConfig: string; issuer?: TokenIssuer }> {
  switch (auth) {
    case 'none':
      return { authConfig: '' };
    case 'htpasswd': {
      const file = path.join(stateDir, 'htpasswd');
      writeFileSync(
        file,
        Object.entries(users)
          .map(([u, p]) => htpasswdLine(u, p))
          .join('\n') + '\n',
      );
      return { authConfig: `auth:\n  htpasswd:\n    realm: tessera-local-registry\n    path: ${file}\n` };
    }
    case 'token': {
      const issuer = new TokenIssuer({
        signing: await tls.ca.issue({ commonName: TOKEN_ISSUER, usage: 'server' }),
        serving: tls.serving,
        users,
        lifetimeSeconds: options.tokenLifetimeSeconds ?? 300,
        anonymousPull: options.anonymousPull ?? false,
      });
      const realm = await issuer.start();
      const authConfig =
        `auth:\n  token:\n    realm: ${realm}\n    service: ${TOKEN_SERVICE}\n    issuer: ${TOKEN_ISSUER}\n` +
        `    rootcertbundle: ${tls.caFile}\n`;
      return { authConfig, issuer };
    }
  }
}

/** Writes config.yml (TLS, filesystem storage with deletes, the access log on) and returns its path. */
function writeRegistryConfig(stateDir: string, host: string, authConfig: string): string {
  const configFile = path.join(stateDir, 'config.yml');
  writeFileSync(
    configFile,
    `version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: false\n` +
      `storage:\n  filesystem:\n    rootdirectory: ${path.join(stateDir, 'storage')}\n  delete:\n    enabled: true\n` +
      `http:\n  addr: ${host}\n  secret: ${randomBytes(16).toString('hex')}\n` +
      `  tls:\n    certificate: ${path.join(stateDir, 'tls.crt')}\n    key: ${path.join(stateDir, 'tls.key')}\n` +
      authConfig,
  );
  return configFile;
}

/** Requests the registry logged (its access log lines in the log file). */
function readAccessLog(logFile: string): AccessLogEntry[] {
  if (!existsSync(logFile)) return [];
  const entries: AccessLogEntry[] = [];
  for (const match of readFileSync(logFile, 'utf8').matchAll(
    /"(GET|HEAD|POST|PUT|PATCH|DELETE) (\S+) HTTP\/[\d.]+" (\d{3})/g,
  )) {
    entries.push({ method: match[1] ?? '', path: match[2] ?? '', status: Number(match[3]) });
  }
  return entries;
}

/** Pushes blobs, manifests and whole images with the distribution API, as the configured user. */
class RegistryPusher {
  constructor(
    private readonly host: string,
    private readonly dispatcher: Agent,
    private readonly authorizationFor: (repository: string) => string | undefined,
  ) {}

  async pushBlob(repository: string, blob: Blob): Promise<void> {
    const base = `https://${this.host}/v2/${repository}`;
    const head = await this.call('HEAD', `${base}/blobs/${blob.digest}`, repository);
    if (head.status === 200) return;
    const start = await this.call('POST', `${base}/blobs/uploads/`, repository);
    const location = start.headers.location;
    if (start.status !== 202 || typeof location !== 'string')
      return fail(`starting a blob upload to ${repository}`, start.status, start.text);
    const target = new URL(location, `https://${this.host}`);
    target.searchParams.set('digest', blob.digest);
    const put = await this.call('PUT', target.href, repository, blob.bytes, 'application/octet-stream');
    if (put.status !== 201) fail(`uploading blob ${blob.digest} to ${repository}`, put.status, put.text);
  }

  async pushManifest(repository: string, reference: string, manifest: Blob): Promise<string> {
    const put = await this.call(
      'PUT',
      `https://${this.host}/v2/${repository}/manifests/${reference}`,
      repository,
      manifest.bytes,
      manifest.mediaType,
    );
    if (put.status !== 201) fail(`pushing manifest ${repository}:${reference}`, put.status, put.text);
    return manifest.digest;
  }

  /** Uploads an image or index with everything it references, tagged `tag`; returns the top-level digest. */
  async pushImage(repository: string, tag: string, image: BuiltImage): Promise<string> {
    await this.pushTree(repository, image);
    return this.pushManifest(repository, tag, image.manifest);
  }

  private async pushTree(repository: string, image: BuiltImage): Promise<void> {
    for (const childImage of image.children) {
      await this.pushTree(repository, childImage);
      await this.pushManifest(repository, childImage.manifest.digest, childImage.manifest);
    }
    for (const blob of image.blobs) await this.pushBlob(repository, blob);
  }

  private async call(
    method: 'GET' | 'HEAD' | 'POST' | 'PUT',
    url: string,
    repository: string,
    body?: Buffer,
    contentType?: string,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
    const headers: Record<string, string> = {};
    const authorization = this.authorizationFor(repository);
    if (authorization !== undefined) headers.authorization = authorization;
    if (contentType !== undefined) headers['content-type'] = contentType;
    const res = await request(url, { method, headers, body, dispatcher: this.dispatcher });
    const text = method === 'HEAD' ? '' : await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }
}

function fail(what: string, status: number, text: string): never {
  throw new DevClusterError(
    'TESSERA_DEVCLUSTER_START_FAILED',
    `local registry: ${what} failed with HTTP ${status}: ${text.slice(0, 300)}`,
  );
}
