// The Bearer token flow against a real registry configured with `auth.token`: the registry trusts the signing
// certificate of a token issuer the test runs, so challenge, token request and token verification are all real.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import { parseDockerConfigJson } from '../../../src/registry/docker-config.js';
import { Keyring } from '../../../src/registry/keyring.js';
import { RegistryInspector } from '../../../src/registry/registry-inspector.js';
import { failure } from './expect-failure.js';

let registry: LocalRegistry;
let stateDir: string;
let keyring: Keyring;

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'tessera-registry-token-it-'));
  registry = await startLocalRegistry({ stateDir, auth: 'token', users: { carol: 'carol-secret' } });
  await registry.pushImage(
    'apps/web',
    'v1',
    multiPlatformImage({
      platforms: [{ architecture: 'amd64' }, { architecture: 'arm64' }],
      attestations: 1,
    }),
  );
  await registry.pushImage(
    'apps/web',
    'v2',
    multiPlatformImage({ platforms: [{ architecture: 'ppc64le' }, { architecture: 's390x' }] }),
  );
  await registry.pushImage(
    'apps/db',
    'v1',
    singleImage({ platform: { architecture: 's390x' }, format: 'docker' }),
  );
  keyring = Keyring.of(parseDockerConfigJson(registry.dockerConfigJson('carol'), 'test/token-secret'));
});

/** The dev registry's token issuer runs on another port of 127.0.0.1: another origin, so it must be trusted explicitly. */
const realmHost = (): string => new URL(registry.tokenRealm ?? '').host;

afterAll(async () => {
  await registry?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('Bearer token flow', () => {
  it('gets a token for the repository scope and inspects with it; later requests reuse the token', async () => {
    const inspector = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      trustedRealmHosts: [realmHost()],
    });
    try {
      const first = await inspector.inspect(`${registry.host}/apps/web:v1`, { keyring });
      expect(first.architectures).toEqual(['amd64', 'arm64']);
      const tokensAfterFirst = registry.tokenRequests().length;
      const logAfterFirst = registry.accessLog().length;

      // Same repository, other tag: the cached token for repository:apps/web:pull is sent up front.
      expect((await inspector.inspect(`${registry.host}/apps/web:v2`, { keyring })).architectures).toEqual([
        'ppc64le',
        's390x',
      ]);
      expect(registry.tokenRequests().length).toBe(tokensAfterFirst);
      expect(
        registry
          .accessLog()
          .slice(logAfterFirst)
          .map((e) => e.status),
      ).toEqual([200]); // the index of two platforms, with the cached token: no 401

      // Another repository is another scope: one new token, still no 401 round trip (the challenge is known).
      expect((await inspector.inspect(`${registry.host}/apps/db:v1`, { keyring })).architectures).toEqual([
        's390x',
      ]);
      const newTokens = registry.tokenRequests().slice(tokensAfterFirst);
      expect(newTokens).toEqual([{ subject: 'carol', scopes: ['repository:apps/db:pull'], status: 200 }]);
    } finally {
      await inspector.close();
    }
  });

  it('refuses anonymous access (the issuer grants nothing, the registry answers 401)', async () => {
    const inspector = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      trustedRealmHosts: [realmHost()],
    });
    try {
      const err = await failure(inspector.inspect(`${registry.host}/apps/web:v1`));
      expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
      expect(registry.tokenRequests().at(-1)).toMatchObject({
        subject: '',
        scopes: ['repository:apps/web:pull'],
      });
    } finally {
      await inspector.close();
    }
  });

  it('reports credentials the token service refuses, without the password', async () => {
    const inspector = new RegistryInspector({
      caCertificates: [registry.caCertPem],
      trustedRealmHosts: [realmHost()],
    });
    const wrong = Keyring.of([
      { key: registry.host, credential: { username: 'carol', password: 'not-her-password' } },
    ]);
    try {
      const err = await failure(inspector.inspect(`${registry.host}/apps/web:v1`, { keyring: wrong }));
      expect(err.code).toBe('TESSERA_REGISTRY_UNAUTHORIZED');
      expect(err.message).toContain('token service refused');
      expect(err.message).not.toContain('not-her-password');
      expect(registry.tokenRequests().at(-1)).toMatchObject({ subject: 'carol', status: 401 });
    } finally {
      await inspector.close();
    }
  });
});
