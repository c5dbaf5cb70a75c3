// `tessera image inspect` as a user runs it: the real CLI entry point in a child process, against a real registry.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { startFakeServer } from './fake-server.js';

const projectRoot = path.resolve(import.meta.dirname, '../../..');
let registry: LocalRegistry;
let stateDir: string;
let secretYaml: string;
let configJson: string;
let digest: string;

function tessera(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(projectRoot, 'src/cli/main.ts'), ...args],
    {
      cwd: projectRoot,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Like `tessera`, without blocking the event loop (for servers running in this process). */
function tesseraAsync(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(projectRoot, 'src/cli/main.ts'), ...args],
      { cwd: projectRoot, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-registry-cli-'));
  registry = await startLocalRegistry({ stateDir, auth: 'htpasswd', users: { dave: 'dave-secret' } });
  digest = await registry.pushImage(
    'cli/app',
    'v1',
    multiPlatformImage({
      platforms: [
        { architecture: 'amd64' },
        { architecture: 'arm64', variant: 'v8' },
        { architecture: 'ppc64le' },
      ],
      attestations: 1,
    }),
  );
  secretYaml = path.join(stateDir, 'pull-secret.yaml');
  writeFileSync(
    secretYaml,
    [
      'apiVersion: v1',
      'kind: Secret',
      'metadata: {name: pull, namespace: team}',
      'type: kubernetes.io/dockerconfigjson',
      'data:',
      `  .dockerconfigjson: ${Buffer.from(registry.dockerConfigJson('dave')).toString('base64')}`,
      '',
    ].join('\n'),
  );
  configJson = path.join(stateDir, 'config.json');
  writeFileSync(configJson, registry.dockerConfigJson('dave'));
});

afterAll(async () => {
  await registry?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('tessera image inspect', () => {
  it('prints architectures and platforms as a table', () => {
    const out = tessera(
      'image',
      'inspect',
      `${registry.host}/cli/app:v1`,
      '--pull-secret',
      secretYaml,
      '--ca-file',
      registry.caFile,
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/ARCHITECTURES\s+amd64, arm64, ppc64le/);
    expect(out.stdout).toMatch(/linux\s+arm64\s+v8\s+sha256:/);
    expect(out.stdout).not.toContain('unknown');
  });

  it('prints JSON and YAML documents', () => {
    const json = tessera(
      'image',
      'inspect',
      `${registry.host}/cli/app:v1`,
      '--pull-secret',
      configJson,
      '--ca-file',
      registry.caFile,
      '-o',
      'json',
    );
    expect(json.status).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      digest: string;
      architectures: string[];
      platforms: { variant: string | null }[];
    };
    expect(doc.digest).toBe(digest);
    expect(doc.architectures).toEqual(['amd64', 'arm64', 'ppc64le']);
    expect(doc.platforms.map((p) => p.variant)).toEqual([null, 'v8', null]);
    const yaml = tessera(
      'image',
      'inspect',
      `${registry.host}/cli/app@${digest}`,
      '--pull-secret',
      configJson,
      '--insecure',
      '-o',
      'yaml',
    );
    expect(yaml.status).toBe(0);
    expect(parse(yaml.stdout)).toEqual({ ...doc, reference: `${registry.host}/cli/app@${digest}` });
  });

  it('exits non-zero with a clear message when the registry refuses', () => {
    const out = tessera('image', 'inspect', `${registry.host}/cli/app:v1`, '--ca-file', registry.caFile);
    expect(out.status).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('requires credentials');
    expect(out.stderr).toContain(`add a pull secret for ${registry.host}`);
  });

  it('sends credentials to a token realm on another host only when given --trusted-realm-host', async () => {
    const image = multiPlatformImage({ platforms: [{ architecture: 's390x' }], salt: 'cli-realm' });
    const fakeRegistry = await startFakeServer();
    const issuer = await startFakeServer();
    const caFile = path.join(stateDir, 'fake-ca.pem');
    writeFileSync(caFile, `${fakeRegistry.caCertPem}\n${issuer.caCertPem}`);
    const realmHost = `localhost:${issuer.host.split(':')[1]}`;
    issuer.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'cli-token' }));
    fakeRegistry.handler = (req, res) => {
      if (req.headers.authorization !== 'Bearer cli-token')
        res.writeHead(401, { 'www-authenticate': `Bearer realm="https://${realmHost}/token"` }).end();
      else res.writeHead(200, { 'content-type': image.manifest.mediaType }).end(image.manifest.bytes);
    };
    const secret = path.join(stateDir, 'realm-config.json');
    writeFileSync(
      secret,
      JSON.stringify({ auths: { [fakeRegistry.host]: { auth: Buffer.from('erin:pw').toString('base64') } } }),
    );
    const common = [
      'image',
      'inspect',
      `${fakeRegistry.host}/app:v1`,
      '--pull-secret',
      secret,
      '--ca-file',
      caFile,
    ];
    try {
      const refused = await tesseraAsync(...common);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('unrelated host');
      expect(issuer.requests).toEqual([]);
      const trusted = await tesseraAsync(...common, '--trusted-realm-host', realmHost, '-o', 'json');
      expect(trusted.stderr).toBe('');
      expect(trusted.status).toBe(0);
      expect((JSON.parse(trusted.stdout) as { architectures: string[] }).architectures).toEqual(['s390x']);
      expect(issuer.requests.map((r) => r.authorization)).toEqual([
        `Basic ${Buffer.from('erin:pw').toString('base64')}`,
      ]);
    } finally {
      await fakeRegistry.close();
      await issuer.close();
    }
  });

  it('exits non-zero on an invalid reference or output format', () => {
    const bad = tessera('image', 'inspect', 'Not/Valid');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('invalid image reference');
    const format = tessera('image', 'inspect', 'nginx', '-o', 'xml');
    expect(format.status).toBe(1);
    expect(format.stderr).toContain(
      "error: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, yaml.",
    );
  });
});
