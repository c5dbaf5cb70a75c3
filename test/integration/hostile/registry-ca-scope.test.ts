// additionalTrustedCA bundles are trusted only for the registry their key names (issue #20 item 8), as CRI-O reads
// /etc/docker/certs.d/<host[:port]>/: a team's own registry CA listed in the cluster's ConfigMap must not let that
// team impersonate another registry (here quay.test) to the operator, which would then send it the global pull
// secret; a blob redirect to a CDN host is verified with the CDN's CAs, never with the registry's. Real TLS servers
// on loopback, reached by name through the transport's lookup hook (every name below resolves to 127.0.0.1).
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { singleImage } from '../../../src/devcluster/registry-images.js';
import { additionalTrustedCas, hostCaCertificatesOf } from '../../../src/podplacement/registry-policy.js';
import type { HostLookup } from '../../../src/registry/http-exchange.js';
import { Keyring } from '../../../src/registry/keyring.js';
import {
  RegistryInspector,
  type RegistryInspectorOptions,
} from '../../../src/registry/registry-inspector.js';
import { createCertificateAuthority, type CertificateAuthority } from '../../../src/runtime/index.js';
import { failure } from '../registry/expect-failure.js';
import { serveImages } from './registry-support.js';

interface TlsRegistry {
  /** `name.test:PORT` */
  readonly host: string;
  /** Authorization headers received, one per request (undefined: none sent). */
  readonly authorizations: (string | undefined)[];
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 presenting a certificate for `name`, issued by `ca`. */
async function startTlsRegistry(name: string, ca: CertificateAuthority): Promise<TlsRegistry> {
  const leaf = await ca.issue({ commonName: name, dnsNames: [name], usage: 'server' });
  const registry: TlsRegistry = {
    host: '',
    authorizations: [],
    handler: (_req, res) => res.writeHead(404).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    registry.authorizations.push(req.headers.authorization);
    registry.handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  Object.assign(registry, { host: `${name}:${(server.address() as AddressInfo).port}` });
  return registry;
}

/** Stands in for DNS: every `.test` name is this machine; nothing leaves loopback. */
const lookup: HostLookup = (_hostname, options, callback) => {
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

const image = singleImage({ platform: { architecture: 'arm64' }, salt: 'ca-scope' });
const serveImage = serveImages({ v1: image });
const user = 'global-pull-secret';
const basicAuth = `Basic ${Buffer.from(`${user}:pw`).toString('base64')}`;

/** Serves the image only with the pull secret's credentials (Basic), as a private registry would. */
function privateRegistry(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers.authorization !== basicAuth)
    res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
  else serveImage(req, res);
}

let teamCa: CertificateAuthority;
let cdnCa: CertificateAuthority;
/** The team's own registry, with a certificate from the team's CA. */
let team: TlsRegistry;
/** Claims to be quay.test, with a certificate the team's CA issued. */
let impostor: TlsRegistry;
/** Blob storage the team's registry redirects to. */
let cdn: TlsRegistry;

beforeAll(async () => {
  [teamCa, cdnCa] = await Promise.all([
    createCertificateAuthority('team-registry-ca'),
    createCertificateAuthority('cdn-ca'),
  ]);
  [team, impostor, cdn] = await Promise.all([
    startTlsRegistry('team.test', teamCa),
    startTlsRegistry('quay.test', teamCa),
    startTlsRegistry('cdn.team.test', teamCa),
  ]);
  team.handler = privateRegistry;
  impostor.handler = privateRegistry;
});

afterAll(async () => {
  await Promise.all([team?.close(), impostor?.close(), cdn?.close()]);
});

/** The key OpenShift's additionalTrustedCA ConfigMap uses for `host:port`. */
const configMapKey = (host: string): string => host.replace(':', '..');

/** The global pull secret: credentials for every registry of this test. */
const globalPullSecret = (): Keyring =>
  Keyring.of(
    [team.host, impostor.host].map((key) => ({ key, credential: { username: user, password: 'pw' } })),
  );

async function withInspector<T>(
  options: RegistryInspectorOptions,
  run: (inspector: RegistryInspector) => Promise<T>,
): Promise<T> {
  const inspector = new RegistryInspector({ lookup, retry: { maxRetries: 0 }, ...options });
  try {
    return await run(inspector);
  } finally {
    await inspector.close();
  }
}

describe.each(['undici', 'node'] as const)(
  'additionalTrustedCA scoped to its host, over %s',
  (httpClient) => {
    it('trusts the team CA for the team registry only: the impostor of quay.test gets no request, so no pull secret', async () => {
      impostor.authorizations.length = 0;
      // The cluster's ConfigMap lists the team's CA under the team registry's key only.
      const { bundles, ignoredKeys } = additionalTrustedCas({ [configMapKey(team.host)]: teamCa.certPem });
      expect(ignoredKeys).toEqual([]);
      await withInspector(
        { httpClient, hostCaCertificates: hostCaCertificatesOf(bundles) },
        async (inspector) => {
          const keyring = globalPullSecret();
          // The team's registry is trusted with its CA ...
          expect((await inspector.inspect(`${team.host}/app:v1`, { keyring })).architectures).toEqual([
            'arm64',
          ]);
          // ... which does not vouch for another host.
          const err = await failure(inspector.inspect(`${impostor.host}/app:v1`, { keyring }));
          expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
          expect(err.retryable).toBe(false); // an untrusted certificate: retrying cannot help
          expect(impostor.authorizations).toEqual([]);
        },
      );
    });

    it('contrast: the same CA given process-wide (--registry-ca, the admin’s choice) is trusted for every host', async () => {
      impostor.authorizations.length = 0;
      await withInspector({ httpClient, caCertificates: [teamCa.certPem] }, async (inspector) => {
        await inspector.inspect(`${impostor.host}/app:v1`, { keyring: globalPullSecret() });
        // This is what trusting every bundle for every registry did: the pull secret went to the impostor.
        expect(impostor.authorizations).toContain(basicAuth);
      });
    });

    it("verifies a blob redirect's CDN host with the CDN's own CAs, never with the registry's", async () => {
      cdn.authorizations.length = 0;
      team.handler = (req, res) => {
        if (req.headers.authorization === basicAuth && req.url?.includes('/blobs/'))
          res.writeHead(307, { location: `https://${cdn.host}${req.url}` }).end();
        else privateRegistry(req, res);
      };
      cdn.handler = serveImage;
      try {
        const teamOnly = hostCaCertificatesOf(
          additionalTrustedCas({ [configMapKey(team.host)]: teamCa.certPem }).bundles,
        );
        await withInspector({ httpClient, hostCaCertificates: teamOnly }, async (inspector) => {
          // The CDN's certificate comes from the team's CA, which is listed for team.test only.
          const err = await failure(
            inspector.inspect(`${team.host}/app:v1`, { keyring: globalPullSecret() }),
          );
          expect(err.code).toBe('TESSERA_REGISTRY_UNAVAILABLE');
          expect(cdn.authorizations).toEqual([]);
        });
        // Listing the CDN's host with its CA (here the same CA: the CDN's own key) makes the redirect verify.
        const both = hostCaCertificatesOf(
          additionalTrustedCas({
            [configMapKey(team.host)]: teamCa.certPem,
            [configMapKey(cdn.host)]: teamCa.certPem,
            'unrelated.test': cdnCa.certPem,
          }).bundles,
        );
        await withInspector({ httpClient, hostCaCertificates: both }, async (inspector) => {
          const inspection = await inspector.inspect(`${team.host}/app:v1`, { keyring: globalPullSecret() });
          expect(inspection.architectures).toEqual(['arm64']);
          // Registry credentials never follow a redirect to another origin.
          expect(cdn.authorizations.length).toBeGreaterThan(0);
          expect(cdn.authorizations.every((a) => a === undefined)).toBe(true);
        });
      } finally {
        team.handler = privateRegistry;
      }
    });
  },
);
