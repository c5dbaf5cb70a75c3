import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from './client.js';
import { InvalidArgumentError } from './errors.js';
import {
  type ConnectionOverrides,
  type KubeConfigEntries,
  applyConnectionOverrides,
  loadKubeConfig,
  loadKubeConnection,
  resolveConnection,
} from './kubeconfig.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-kubeconfig-'));

describe('loadKubeConfig', () => {
  it('loads the file the flag names', async () => {
    const file = path.join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const kubeConfig = await loadKubeConfig(file);
    expect(kubeConfig.getCurrentContext()).toBe('x');
    expect(kubeConfig.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('refuses a file it cannot load, naming the flag and the file', async () => {
    const missing = path.join(dir, 'absent');
    const err: unknown = await loadKubeConfig(missing, '--hosted-kubeconfig').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('--hosted-kubeconfig');
    expect((err as Error).message).toMatch(
      new RegExp(`^invalid value for --hosted-kubeconfig: cannot load ${missing} \\(ENOENT`),
    );
  });
});

// oc's connection flags over a kubeconfig: what clientcmd's overrides do, and the one place Tessera differs
// (--token replaces the user's certificate instead of riding along with it).
describe('resolveConnection', () => {
  const entries: KubeConfigEntries = {
    contexts: [
      { name: 'a', cluster: 'ca', user: 'cert' },
      { name: 'b', cluster: 'cb', user: 'tok' },
      { name: 'no-cluster', cluster: 'missing', user: 'tok' },
    ],
    clusters: [
      {
        name: 'ca',
        server: 'https://a:6443',
        caData: 'Q0E=',
        tlsServerName: 'a.internal',
        skipTLSVerify: false,
      },
      { name: 'cb', server: 'https://b:6443', skipTLSVerify: true },
    ],
    users: [
      { name: 'cert', certData: 'Y2VydA==', keyData: 'a2V5', impersonateUser: 'kc-as' },
      { name: 'tok', token: 'kc-token', exec: { command: 'never-run' }, username: 'u', password: 'p' },
    ],
    currentContext: 'a',
  };

  function refusal(overrides: ConnectionOverrides, base: KubeConfigEntries = entries): InvalidArgumentError {
    try {
      resolveConnection(base, overrides);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).code).toBe('TESSERA_INVALID_ARGUMENT');
      return err as InvalidArgumentError;
    }
    throw new Error(`accepted ${JSON.stringify(overrides)}`);
  }

  it('without flags, is the current context as the kubeconfig has it', () => {
    const { context, cluster, user, headers } = resolveConnection(entries, {});
    expect(context.name).toBe('a');
    expect(cluster).toEqual(entries.clusters[0]);
    expect(user).toEqual(entries.users[0]);
    expect(headers).toEqual({});
  });

  it('--context picks another context; one the kubeconfig lacks is refused, naming those it has', () => {
    expect(resolveConnection(entries, { context: 'b' }).cluster.server).toBe('https://b:6443');
    const err = refusal({ context: 'c' });
    expect(err.field).toBe('--context');
    expect(err.message).toBe(
      'invalid value for --context: context "c" does not exist (the kubeconfig has "a", "b", "no-cluster")',
    );
    expect(refusal({}, { ...entries, currentContext: 'gone' }).field).toBe('--kubeconfig');
  });

  it("--server replaces the cluster's server and its tls-server-name, and keeps its CA", () => {
    const { cluster } = resolveConnection(entries, { server: 'https://proxy:8443' });
    expect(cluster).toEqual({
      name: 'ca',
      server: 'https://proxy:8443',
      caData: 'Q0E=',
      skipTLSVerify: false,
    });
    // A context whose cluster is missing gets one from the flag, as kubectl builds it from the overrides.
    expect(resolveConnection(entries, { context: 'no-cluster', server: 'https://x:1' }).cluster.server).toBe(
      'https://x:1',
    );
    expect(refusal({ context: 'no-cluster' }).field).toBe('--server');
  });

  it('--certificate-authority replaces the CA and turns insecure off; --insecure-skip-tls-verify drops the CA', () => {
    expect(
      resolveConnection(entries, { context: 'b', certificateAuthority: '/ca.pem' }).cluster,
    ).toMatchObject({
      caFile: '/ca.pem',
      caData: undefined,
      skipTLSVerify: false,
    });
    expect(resolveConnection(entries, { insecureSkipTlsVerify: true }).cluster).toMatchObject({
      caFile: undefined,
      caData: undefined,
      skipTLSVerify: true,
    });
  });

  it('refuses a CA together with insecure-skip-tls-verify, as client-go refuses it', () => {
    const both = refusal({ certificateAuthority: '/ca.pem', insecureSkipTlsVerify: true });
    expect(both.field).toBe('--insecure-skip-tls-verify');
    expect(both.message).toContain(
      'specifying a root certificates file with the insecure flag is not allowed',
    );
    // The kubeconfig's own cluster with both: refused too, and a flag picks one.
    const conflicting = {
      ...entries,
      clusters: [{ name: 'ca', server: 'https://a:6443', caData: 'Q0E=', skipTLSVerify: true }],
    };
    expect(refusal({}, conflicting).field).toBe('--kubeconfig');
    expect(resolveConnection(conflicting, { insecureSkipTlsVerify: true }).cluster.caData).toBeUndefined();
  });

  it("--token replaces the user's other credentials (certificate, exec, basic auth), keeping its impersonation", () => {
    expect(resolveConnection(entries, { token: 'flag' }).user).toEqual({
      name: 'cert',
      token: 'flag',
      impersonateUser: 'kc-as',
    });
    expect(resolveConnection(entries, { context: 'b', token: 'flag' }).user).toEqual({
      name: 'tok',
      token: 'flag',
      impersonateUser: undefined,
    });
  });

  it('--as replaces the kubeconfig user\'s "as"; --as-group and --as-uid become headers, and need a user', () => {
    const { user, headers } = resolveConnection(entries, {
      impersonateUser: 'jane',
      impersonateGroups: ['dev', 'ops'],
      impersonateUid: '42',
    });
    expect(user.impersonateUser).toBe('jane');
    expect(headers).toEqual({ 'Impersonate-Group': ['dev', 'ops'], 'Impersonate-Uid': '42' });
    // The kubeconfig's "as" is a user to impersonate too.
    expect(resolveConnection(entries, { impersonateGroups: ['dev'] }).headers).toEqual({
      'Impersonate-Group': ['dev'],
    });
    const groups = refusal({ context: 'b', impersonateGroups: ['dev'] });
    expect(groups.message).toBe(
      'invalid value for --as-group: requesting groups without impersonating a user; give --as too',
    );
    expect(refusal({ context: 'b', impersonateUid: '42' }).field).toBe('--as-uid');
  });

  it('takes an empty value for no flag, as kubectl does', () => {
    expect(
      resolveConnection(entries, {
        context: '',
        server: '',
        token: '',
        impersonateUser: '',
        impersonateGroups: [''],
      }),
    ).toEqual(resolveConnection(entries, {}));
  });

  it('goes on without a current context when the flags give a server', () => {
    const none = { ...entries, currentContext: undefined };
    const { cluster, user } = resolveConnection(none, { server: 'https://x:6443', token: 't' });
    expect(cluster.server).toBe('https://x:6443');
    expect(user.token).toBe('t');
    expect(refusal({ token: 't' }, none).field).toBe('--server');
  });
});

describe('applyConnectionOverrides', () => {
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, 'PEM OF THE CA');

  function certKubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: 'https://a:6443',
          caData: Buffer.from('KUBECONFIG CA').toString('base64'),
          skipTLSVerify: false,
        },
        { name: 'other', server: 'https://other:6443', skipTLSVerify: false },
      ],
      users: [{ name: 'u', token: 'kc-token' }],
      contexts: [
        { name: 'x', cluster: 'c', user: 'u' },
        { name: 'y', cluster: 'other', user: 'u' },
      ],
      currentContext: 'x',
    });
    return kc;
  }

  async function httpsOptions(kc: KubeConfig): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return opts;
  }

  it('gives the request options every request is built from: token, impersonation, CA', async () => {
    const kc = await applyConnectionOverrides(certKubeConfig(), {
      server: 'https://proxy:8443',
      certificateAuthority: caFile,
      token: 'flag-token',
      impersonateUser: 'jane',
      impersonateGroups: ['dev', 'ops'],
    });
    expect(kc.getCurrentCluster()?.server).toBe('https://proxy:8443');
    const opts = await httpsOptions(kc);
    expect(opts.headers).toMatchObject({
      Authorization: 'Bearer flag-token',
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['dev', 'ops'],
    });
    expect(opts.ca?.toString()).toBe('PEM OF THE CA');
    // The other context is left as it was.
    expect(kc.getCluster('other')?.server).toBe('https://other:6443');
  });

  it('refuses a CA file it cannot read, naming the flag', async () => {
    const err: unknown = await applyConnectionOverrides(certKubeConfig(), {
      certificateAuthority: path.join(dir, 'absent.pem'),
    }).catch((e: unknown) => e);
    expect((err as InvalidArgumentError).field).toBe('--certificate-authority');
  });

  it('reaches the server on every request KubeClient makes, one Impersonate-Group line per group', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const distinct: Record<string, string[]>[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      distinct.push(req.headersDistinct as Record<string, string[]>);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const kc = await applyConnectionOverrides(certKubeConfig(), {
      // client-node connects to a plain-HTTP server only with insecure-skip-tls-verify.
      server: `http://127.0.0.1:${port}`,
      insecureSkipTlsVerify: true,
      token: 'flag-token',
      impersonateUser: 'jane',
      impersonateGroups: ['dev, ops', 'qa'],
      impersonateUid: '42',
    });
    const client = new KubeClient(kc);
    try {
      await client.request({ method: 'GET', path: '/api' });
      await client.request({ method: 'GET', path: '/apis' });
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(seen).toHaveLength(2);
    for (const [i, headers] of seen.entries()) {
      expect(headers.authorization).toBe('Bearer flag-token');
      expect(headers['impersonate-user']).toBe('jane');
      expect(headers['impersonate-uid']).toBe('42');
      expect(distinct[i]?.['impersonate-group']).toEqual(['dev, ops', 'qa']);
    }
  });

  it('is what loadKubeConfig gives with overrides', async () => {
    const file = path.join(dir, 'two-contexts');
    writeFileSync(file, certKubeConfig().exportConfig());
    const kc = await loadKubeConfig(file, '--kubeconfig', { context: 'y', insecureSkipTlsVerify: true });
    expect(kc.getCurrentCluster()?.server).toBe('https://other:6443');
    expect((await httpsOptions(kc)).rejectUnauthorized).toBe(false);
  });
});

describe('loadKubeConnection', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  /** What KubeClient takes from `connection` for its requests (client-node also sets an agent it does not use). */
  const optionsOf = async (connection: {
    applyToHTTPSOptions(o: https.RequestOptions): Promise<void>;
  }): Promise<Record<string, unknown>> => {
    const opts: https.RequestOptions = {};
    await connection.applyToHTTPSOptions(opts);
    const used = [
      'ca',
      'cert',
      'key',
      'pfx',
      'passphrase',
      'rejectUnauthorized',
      'servername',
      'auth',
    ] as const;
    const picked: Record<string, unknown> = {};
    for (const k of used) if (opts[k] !== undefined) picked[k] = opts[k];
    if (Object.keys(opts.headers ?? {}).length > 0) picked.headers = opts.headers;
    return picked;
  };
  const write = (name: string, lines: string[]): string => {
    const file = path.join(dir, name);
    writeFileSync(file, lines.join('\n'));
    return file;
  };

  it('reads a plain kubeconfig without client-node, giving each request what client-node would', async () => {
    writeFileSync(path.join(dir, 'ca.pem'), 'CA FROM FILE');
    const files = [
      write('plain-cert', [
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443/", certificate-authority-data: ' +
          `"${b64('CA')}", tls-server-name: api.example}}]`,
        `users: [{name: u, user: {client-certificate-data: "${b64('CERT')}", client-key-data: "${b64('KEY')}"}}]`,
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ]),
      // A relative path is relative to the kubeconfig's folder, as client-node and kubectl read it.
      write('plain-token', [
        'clusters: [{name: c, cluster: {server: "https://10.0.0.1", certificate-authority: ca.pem}}]',
        'users: [{name: u, user: {token: secret}}, {name: other, user: {token: wrong}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ]),
      write('plain-insecure', [
        'clusters: [{name: c, cluster: {server: "https://10.0.0.1", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ]),
    ];
    for (const file of files) {
      const connection = await loadKubeConnection(file, { env: {} });
      expect(connection, file).not.toBeInstanceOf(KubeConfig);
      const reference = await loadKubeConfig(file);
      expect(connection.getCurrentContext()).toBe(reference.getCurrentContext());
      expect(connection.getCurrentCluster()?.server).toBe(reference.getCurrentCluster()?.server);
      expect(await optionsOf(connection), file).toEqual(await optionsOf(reference));
    }
  });

  it('leaves what it does not read to client-node: exec plugins, impersonation, proxies, a KUBECONFIG list', async () => {
    const exec = write('exec', [
      'clusters: [{name: c, cluster: {server: "https://10.0.0.1"}}]',
      'users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token}}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ]);
    const impersonating = write('as', [
      'clusters: [{name: c, cluster: {server: "https://10.0.0.1"}}]',
      'users: [{name: u, user: {token: t, as: someone}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ]);
    const proxied = write('proxy', [
      'clusters: [{name: c, cluster: {server: "https://10.0.0.1", proxy-url: "http://proxy:3128"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ]);
    for (const file of [exec, impersonating, proxied])
      expect(await loadKubeConnection(file, { env: {} }), file).toBeInstanceOf(KubeConfig);
    const env = { KUBECONFIG: [impersonating, proxied].join(path.delimiter) };
    expect(await loadKubeConnection(undefined, { env })).toBeInstanceOf(KubeConfig);
  });

  it("keeps loadKubeConfig's errors for a file it cannot read", async () => {
    await expect(loadKubeConnection(path.join(dir, 'missing'), { env: {} })).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it('in a pod, talks to the service address with the mounted CA and reads the rotated token again', async () => {
    const account = mkdtempSync(path.join(os.tmpdir(), 'tessera-serviceaccount-'));
    writeFileSync(path.join(account, 'ca.crt'), 'CLUSTER CA');
    writeFileSync(path.join(account, 'token'), 'first');
    const env = {
      HOME: path.join(account, 'no-home'),
      KUBERNETES_SERVICE_HOST: 'fd00::1',
      KUBERNETES_SERVICE_PORT: '443',
    };
    const connection = await loadKubeConnection(undefined, { env, serviceAccountDir: account });
    expect(connection).not.toBeInstanceOf(KubeConfig);
    expect(connection.getCurrentContext()).toBe('inClusterContext');
    expect(connection.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(await optionsOf(connection)).toEqual({
      ca: Buffer.from('CLUSTER CA'),
      headers: { Authorization: 'Bearer first' },
    });
    writeFileSync(path.join(account, 'token'), 'second');
    expect((await optionsOf(connection)).headers).toEqual({ Authorization: 'Bearer second' });
  });
});
