// Image inspection behind an egress proxy: a real forward proxy on loopback (the `proxy` npm package, see
// test/support/forward-proxy.ts) in front of a real distribution registry with htpasswd auth. The registry is named
// `registry.proxy-test:PORT`: a name only the proxy resolves (to 127.0.0.1), as outside names often are in a
// proxied cluster, and not a loopback literal, which is never proxied. Failures of the proxy (down, silent, 403, 407)
// must name the proxy, arrive within the pod's deadline, and leave this process serving.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/devcluster/processes.js';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { registryTimeouts } from '../../../src/podplacement/operator/image-inspection.js';
import { parseDockerConfigJson } from '../../../src/registry/docker-config.js';
import { ProxyError } from '../../../src/registry/errors.js';
import type { HostLookup } from '../../../src/registry/http-exchange.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { emptyRegistryPolicy, type RegistryPolicy } from '../../../src/registry/mirrors.js';
import { proxyConfigFromEnvironment, type ProxyEnvironment } from '../../../src/registry/proxy-config.js';
import { RegistryInspector } from '../../../src/registry/registry-inspector.js';
import { RegistryTransport, type UnreachableEvent } from '../../../src/registry/transport.js';
import { createCertificateAuthority } from '../../../src/runtime/index.js';
import { startForwardProxy, type ForwardProxy } from '../../support/forward-proxy.js';
import { startSilentRegistry } from '../../support/silent-registry.js';
import { failure } from './expect-failure.js';

const projectRoot = path.resolve(import.meta.dirname, '../../..');
const registryName = 'registry.proxy-test';
/** The pod's deadline the operator would use (--inspection-deadline-ms default), and its request timeouts. */
const deadlineMs = 15_000;

let registry: LocalRegistry;
let stateDir: string;
let proxy: ForwardProxy;
let registryPort: string;
let image: string;
let keyring: Keyring;
const open: { close(): Promise<void> }[] = [];

/** This process's resolver: `names` resolve as given, every other `.proxy-test` name is unknown here. */
function lookupWith(names: Readonly<Record<string, string>>): HostLookup {
  return (hostname, _options, callback) => {
    const address = names[hostname];
    if (address !== undefined) return callback(null, [{ address, family: 4 }]);
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    error.code = 'ENOTFOUND';
    callback(error, '', 0);
  };
}

function inspectorWith(
  env: ProxyEnvironment,
  options: {
    names?: Record<string, string>;
    policy?: RegistryPolicy;
    trustRegistry?: boolean;
    extraCas?: string[];
    onUnreachable?: (event: UnreachableEvent) => void;
  } = {},
): RegistryInspector {
  const proxyConfig = proxyConfigFromEnvironment(env);
  const inspector = new RegistryInspector({
    ...(proxyConfig ? { proxy: proxyConfig } : {}),
    caCertificates: [
      ...(options.trustRegistry === false ? [] : [registry.caCertPem]),
      ...(options.extraCas ?? []),
    ],
    lookup: lookupWith(options.names ?? {}),
    ...(options.onUnreachable ? { onUnreachable: options.onUnreachable } : {}),
    policy: () => options.policy ?? emptyRegistryPolicy,
    ...registryTimeouts(deadlineMs),
    retry: { maxRetries: 1, baseDelayMs: 50 },
  });
  open.push(inspector);
  return inspector;
}

/** Inspects as the pod reconciler does: under the pod's deadline. */
const inspect = (inspector: RegistryInspector, reference = image) =>
  inspector.inspect(reference, { keyring, signal: AbortSignal.timeout(deadlineMs) });

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-registry-proxy-'));
  registry = await startLocalRegistry({
    stateDir,
    auth: 'htpasswd',
    users: { alice: 'alice-secret' },
    extraDnsNames: [registryName],
  });
  await registry.pushImage(
    'team/app',
    'v1',
    multiPlatformImage({ platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }], salt: 'proxy' }),
  );
  registryPort = registry.host.split(':')[1] ?? '';
  image = `${registryName}:${registryPort}/team/app:v1`;
  const auth = Buffer.from('alice:alice-secret').toString('base64');
  keyring = Keyring.of(
    parseDockerConfigJson(
      JSON.stringify({ auths: { [`${registryName}:${registryPort}`]: { auth } } }),
      'test/pull-secret',
    ),
  );
  proxy = await startForwardProxy({ hosts: { [registryName]: '127.0.0.1' } });
});

afterAll(async () => {
  await Promise.all(open.map((o) => o.close()));
  await proxy?.close();
  await registry?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('through a forward proxy', () => {
  it('inspects an image through a CONNECT tunnel; the proxy never sees the registry credentials', async () => {
    const before = proxy.connects().length;
    const result = await inspect(inspectorWith({ HTTPS_PROXY: proxy.url }));
    expect(result.architectures).toEqual(['amd64', 'arm64']);
    const tunnels = proxy.connects().slice(before);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels.map((t) => t.target))).toEqual(new Set([`${registryName}:${registryPort}`]));
    for (const t of tunnels) {
      expect(t.headers.authorization).toBeUndefined();
      expect(t.headers['proxy-authorization']).toBeUndefined();
    }
    expect(proxy.forwarded()).toEqual([]);
    // The credentials reached the registry inside the tunnel: it answered the authenticated manifest request.
    expect(
      registry.accessLog().some((e) => e.path.startsWith('/v2/team/app/manifests/') && e.status === 200),
    ).toBe(true);
  });

  it('sends credentials from the proxy URL only to the proxy, as Proxy-Authorization', async () => {
    const guarded = await startForwardProxy({
      hosts: { [registryName]: '127.0.0.1' },
      credentials: { user: 'tessera', password: 'pr@xy:secret' },
    });
    open.push(guarded);
    const url = `http://tessera:${encodeURIComponent('pr@xy:secret')}@127.0.0.1:${guarded.port}`;
    const result = await inspect(inspectorWith({ https_proxy: url }));
    expect(result.architectures).toEqual(['amd64', 'arm64']);
    const expected = `Basic ${Buffer.from('tessera:pr@xy:secret').toString('base64')}`;
    expect(guarded.connects().map((c) => c.headers['proxy-authorization'])).toContain(expected);
    expect(guarded.connects().every((c) => c.headers.authorization === undefined)).toBe(true);
  });

  it('tunnels through an https:// proxy verified with the trusted CA bundle, and names it when untrusted', async () => {
    const ca = await createCertificateAuthority('trusted-proxy-ca');
    const leaf = await ca.issue({ commonName: 'proxy', ipAddresses: ['127.0.0.1'], usage: 'server' });
    const tlsProxy = await startForwardProxy({
      hosts: { [registryName]: '127.0.0.1' },
      tls: { certPem: leaf.certPem, keyPem: leaf.keyPem },
    });
    open.push(tlsProxy);
    // The bundle (as the trusted CA ConfigMap holds it) is trusted for every host: the proxy and the registry.
    const trusted = inspectorWith({ HTTPS_PROXY: tlsProxy.url }, { extraCas: [ca.certPem] });
    expect((await inspect(trusted)).architectures).toEqual(['amd64', 'arm64']);
    expect(tlsProxy.connects().map((c) => c.target)).toContain(`${registryName}:${registryPort}`);
    const untrusted = await failure(inspect(inspectorWith({ HTTPS_PROXY: tlsProxy.url })));
    expect(untrusted.code).toBe('TESSERA_REGISTRY_PROXY_UNAVAILABLE');
    expect(untrusted.message).toContain(
      `through the proxy ${tlsProxy.url} (HTTPS_PROXY): cannot connect to the proxy`,
    );
    expect(untrusted.message).toContain('its certificate is not trusted');
    expect(untrusted.retryable).toBe(false);
  });

  it('reaches an insecure registry (unverified TLS) through the tunnel too', async () => {
    const before = proxy.connects().length;
    const policy = { ...emptyRegistryPolicy, insecureRegistries: [`${registryName}:${registryPort}`] };
    const result = await inspect(inspectorWith({ HTTPS_PROXY: proxy.url }, { policy, trustRegistry: false }));
    expect(result.architectures).toEqual(['amd64', 'arm64']);
    expect(proxy.connects().length).toBeGreaterThan(before);
  });

  it('tunnels a plain-http registry with CONNECT as well, so the proxy sees no request and no header', async () => {
    const seen: (string | undefined)[] = [];
    const plain = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => plain.close(() => resolve())) });
    const plainProxy = await startForwardProxy({ hosts: { 'plain.proxy-test': '127.0.0.1' } });
    open.push(plainProxy);
    const transport = new RegistryTransport({
      proxy: proxyConfigFromEnvironment({ HTTP_PROXY: plainProxy.url }),
      lookup: lookupWith({}),
    });
    open.push(transport);
    const port = (plain.address() as AddressInfo).port;
    const response = await transport.get(new URL(`http://plain.proxy-test:${port}/v2/`), {
      headers: { authorization: 'Basic c2VjcmV0' },
      maxBodyBytes: 1024,
      insecure: true,
      what: 'registry check',
    });
    expect(response.status).toBe(200);
    expect(seen).toEqual(['Basic c2VjcmV0']);
    expect(plainProxy.connects().map((c) => c.target)).toEqual([`plain.proxy-test:${port}`]);
    expect(plainProxy.connects()[0]?.headers.authorization).toBeUndefined();
    expect(plainProxy.forwarded()).toEqual([]);
  });

  it('goes directly to hosts NO_PROXY lists', async () => {
    const before = proxy.connects().length;
    const inspector = inspectorWith(
      { HTTPS_PROXY: proxy.url, NO_PROXY: 'quay.io,.proxy-test' },
      { names: { [registryName]: '127.0.0.1' } },
    );
    expect((await inspect(inspector)).architectures).toEqual(['amd64', 'arm64']);
    expect(proxy.connects().length).toBe(before);
  });

  it('judges the registry name by the address policy before asking the proxy for a tunnel', async () => {
    const before = proxy.connects().length;
    const inspector = inspectorWith(
      { HTTPS_PROXY: proxy.url },
      { names: { 'metadata.proxy-test': '169.254.169.254' } },
    );
    const err = await failure(inspect(inspector, 'metadata.proxy-test/team/app:v1'));
    expect(err.code).toBe('TESSERA_REGISTRY_BLOCKED');
    expect(
      proxy
        .connects()
        .slice(before)
        .map((c) => c.target),
    ).toEqual([]);
  });
});

describe('proxy failures name the proxy, within the pod deadline', () => {
  it('a proxy that is down: PROXY_UNAVAILABLE naming it and the variable', async () => {
    const port = await freePort();
    const err = await failure(inspect(inspectorWith({ HTTPS_PROXY: `http://127.0.0.1:${port}` })));
    expect(err).toBeInstanceOf(ProxyError);
    expect(err.code).toBe('TESSERA_REGISTRY_PROXY_UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(`through the proxy http://127.0.0.1:${port} (HTTPS_PROXY)`);
    expect(err.message).toContain('cannot connect to the proxy (ECONNREFUSED)');
  });

  it('a proxy that accepts connections and never answers: PROXY_UNAVAILABLE after the connect timeout', async () => {
    const silent = await startSilentRegistry();
    open.push(silent);
    const err = await failure(inspect(inspectorWith({ HTTPS_PROXY: `http://${silent.host}` })));
    expect(err.code).toBe('TESSERA_REGISTRY_PROXY_UNAVAILABLE');
    expect(err.message).toContain(`the proxy http://${silent.host} (HTTPS_PROXY)`);
    expect(err.message).toContain('the proxy did not answer');
    expect(silent.connections()).toBeGreaterThan(0);
  });

  it('a proxy that refuses the tunnel (403): PROXY_REFUSED, not retried, says to allow it or use NO_PROXY', async () => {
    const strict = await startForwardProxy({ refuse: (target) => target.startsWith(`${registryName}:`) });
    open.push(strict);
    const err = await failure(inspect(inspectorWith({ HTTPS_PROXY: strict.url })));
    expect(err).toBeInstanceOf(ProxyError);
    expect(err.code).toBe('TESSERA_REGISTRY_PROXY_REFUSED');
    expect((err as ProxyError).statusCode).toBe(403);
    expect(err.message).toContain(`no tunnel to ${registryName}:`);
    expect(err.message).toContain(`through the proxy ${strict.url} (HTTPS_PROXY)`);
    expect(err.message).toContain('NO_PROXY');
    // Refusals are final: one CONNECT per pull source, no retry.
    expect(strict.connects()).toHaveLength(1);
  });

  it('a proxy that wants credentials (407): PROXY_REFUSED that says so and never shows the wrong password', async () => {
    const guarded = await startForwardProxy({
      hosts: { [registryName]: '127.0.0.1' },
      credentials: { user: 'tessera', password: 'right' },
    });
    open.push(guarded);
    const none = await failure(inspect(inspectorWith({ HTTPS_PROXY: guarded.url })));
    expect(none.code).toBe('TESSERA_REGISTRY_PROXY_REFUSED');
    expect((none as ProxyError).statusCode).toBe(407);
    expect(none.message).toContain('it asks for credentials (407 Proxy Authentication Required)');
    const wrong = await failure(
      inspect(inspectorWith({ HTTPS_PROXY: `http://tessera:wrong-secret@127.0.0.1:${guarded.port}` })),
    );
    expect(wrong.code).toBe('TESSERA_REGISTRY_PROXY_REFUSED');
    expect(wrong.message).toContain(`the proxy http://127.0.0.1:${guarded.port} (HTTPS_PROXY)`);
    expect(`${wrong.message} ${String(wrong.cause ?? '')}`).not.toContain('wrong-secret');
  });

  it('a registry the proxy cannot reach fails as any unreachable registry: one uniform message, detail in the log', async () => {
    const closedPort = await freePort();
    const relay = await startForwardProxy({ hosts: { 'closed.proxy-test': '127.0.0.1' } });
    open.push(relay);
    const events: UnreachableEvent[] = [];
    const inspector = inspectorWith({ HTTPS_PROXY: relay.url }, { onUnreachable: (e) => events.push(e) });
    const err = await failure(inspect(inspector, `closed.proxy-test:${closedPort}/team/app:v1`));
    // What a tenant sees cannot tell a closed port from a silent one, through the proxy or not.
    expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
    expect(err.message).toContain(`cannot reach closed.proxy-test:${closedPort}: no usable answer`);
    expect(err.message).not.toContain(relay.url);
    // The operator log says what the proxy answered.
    expect(events.map((e) => e.code)).toContain('ETESSERA_PROXY_UPSTREAM');
    expect(events[0]?.message).toContain(`the proxy ${relay.url} (HTTPS_PROXY) could not open a tunnel`);
  });

  it('keeps serving after proxy failures: the next inspection through a working proxy succeeds', async () => {
    expect((await inspect(inspectorWith({ HTTPS_PROXY: proxy.url }))).architectures).toEqual([
      'amd64',
      'arm64',
    ]);
  });
});

describe('tessera image inspect', () => {
  it('honours HTTPS_PROXY from the environment, as crane and skopeo do', async () => {
    const before = proxy.connects().length;
    const secretFile = path.join(stateDir, 'proxy-pull-secret.json');
    const auth = Buffer.from('alice:alice-secret').toString('base64');
    writeFileSync(secretFile, JSON.stringify({ auths: { [`${registryName}:${registryPort}`]: { auth } } }));
    const { NO_PROXY: _n, no_proxy: _l, ...env } = process.env;
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(projectRoot, 'src/cli/main.ts'),
          'image',
          'inspect',
          image,
          '--pull-secret',
          secretFile,
          '--ca-file',
          registry.caFile,
          '-o',
          'json',
        ],
        { cwd: projectRoot, encoding: 'utf8', timeout: 60_000, env: { ...env, HTTPS_PROXY: proxy.url } },
        (err, stdout, stderr) =>
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
      ),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { architectures: string[] }).architectures).toEqual([
      'amd64',
      'arm64',
    ]);
    expect(proxy.connects().length).toBeGreaterThan(before);
  });
});
