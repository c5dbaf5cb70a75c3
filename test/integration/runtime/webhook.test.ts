// The webhook server called by the real kube-apiserver through a MutatingWebhookConfiguration (url + caBundle),
// plus direct requests showing that bad certificates, oversized and malformed bodies are refused cleanly while the
// server keeps serving.
import https from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import { ApiStatusError } from '../../../src/runtime/errors.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { ConfigMaps, MutatingWebhookConfigurations } from '../../../src/runtime/resources.js';
import { denied, patched, type AdmissionRequest } from '../../../src/runtime/webhook/admission.js';
import { CertificateError } from '../../../src/runtime/webhook/certificate-source.js';
import { generateDevCertificate } from '../../../src/runtime/webhook/dev-certificate.js';
import { WebhookServer } from '../../../src/runtime/webhook/server.js';
import type { Logger } from '../../../src/runtime/logging.js';
import { eventually, testKubeConfig, uniqueName, useTestNamespace } from '../../support/cluster.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

function capture(lines: string[]): Logger {
  const at = (level: string) => (obj: object, msg?: string) =>
    lines.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  const logger: Logger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: () => logger,
  };
  return logger;
}

function post(
  port: number,
  ca: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  method = 'POST',
  urlPath = '/mutate',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method,
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = (uid: string, object: unknown): string =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      operation: 'CREATE',
      userInfo: {},
      object,
    },
  });

describe('webhook server', () => {
  const ns = useTestNamespace('rt-webhook');
  const logs: string[] = [];
  const stop = new AbortController();
  const seen: AdmissionRequest[] = [];
  let server: WebhookServer;
  let running: Promise<void>;
  let ca = '';
  const client = new KubeClient(testKubeConfig());
  const configName = uniqueName('tessera-rt-webhook');
  const configs = new ResourceClient<KubeObject & Record<string, unknown>>(
    client,
    MutatingWebhookConfigurations,
  );

  beforeAll(async () => {
    server = new WebhookServer({
      port: 0,
      host: '127.0.0.1',
      devCertificate: { ipAddresses: ['127.0.0.1'] },
      maxRequestBytes: 64 * 1024,
      handlerTimeoutMs: 1_000,
      logger: capture(logs),
    });
    server.register('/mutate', {
      handle(req) {
        seen.push(req);
        const obj = req.object as Cm;
        if (obj.metadata?.labels?.deny === 'true')
          return denied('configmaps labelled deny=true are refused by the test webhook');
        const mutated = structuredClone(obj);
        mutated.metadata = {
          ...mutated.metadata,
          labels: { ...(mutated.metadata?.labels ?? {}), 'tessera.dev/mutated': 'true' },
        };
        return patched(obj, mutated);
      },
    });
    server.register('/slow', {
      handle: (_req, signal) =>
        new Promise((resolve) => {
          const t = setTimeout(() => resolve({ allowed: true }), 5_000);
          signal.addEventListener('abort', () => clearTimeout(t));
        }),
    });
    server.register('/explode', {
      handle() {
        throw new Error('handler bug');
      },
    });
    running = server.start(stop.signal);
    await server.ready();
    ca = server.caBundle() ?? '';
  });

  afterAll(async () => {
    await configs.delete({ name: configName }).catch(() => undefined);
    stop.abort();
    await running;
    await client.close();
  });

  it('is called by kube-apiserver and its JSON patch is applied; denials reach the user', async () => {
    await configs.create({
      metadata: { name: configName },
      webhooks: [
        {
          name: 'cm.tessera.dev',
          clientConfig: {
            url: `https://127.0.0.1:${server.port()}/mutate`,
            caBundle: Buffer.from(ca).toString('base64'),
          },
          rules: [
            { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
          ],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns.name } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 5,
        },
      ],
    });
    const cms = new ResourceClient<Cm>(client, ConfigMaps);
    // The configuration takes effect asynchronously in the apiserver: retry with fresh names until mutated.
    const created = await eventually(
      async () => {
        const cm = await cms.create({
          metadata: { namespace: ns.name, name: uniqueName('cm') },
          data: { a: 'b' },
        });
        expect(cm.metadata?.labels?.['tessera.dev/mutated']).toBe('true');
        return cm;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the webhook to mutate a ConfigMap' },
    );
    expect(created.data).toEqual({ a: 'b' });
    expect(seen.some((r) => r.namespace === ns.name && r.operation === 'CREATE')).toBe(true);

    const refusal = await cms
      .create({ metadata: { namespace: ns.name, name: 'denied', labels: { deny: 'true' } } })
      .catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(ApiStatusError);
    expect((refusal as ApiStatusError).statusCode).toBe(403);
    expect((refusal as Error).message).toMatch(/refused by the test webhook/);
  });

  it('refuses malformed, oversized and wrongly framed requests with clean status codes, and keeps serving', async () => {
    const port = server.port();
    const before = logs.length;
    expect((await post(port, ca, '{not json')).status).toBe(400);
    expect(
      (
        await post(
          port,
          ca,
          JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: {} }),
        )
      ).status,
    ).toBe(400);
    expect(
      (await post(port, ca, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })))
        .status,
    ).toBe(400);
    expect(
      (
        await post(
          port,
          ca,
          review('x', { metadata: { name: 'big' }, data: { blob: 'x'.repeat(100 * 1024) } }),
        )
      ).status,
    ).toBe(413);
    expect((await post(port, ca, review('x', {}), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(port, ca, '', {}, 'GET')).status).toBe(405);
    expect((await post(port, ca, review('x', {}), {}, 'POST', '/nowhere')).status).toBe(404);
    // The malformed ones left a log line each.
    expect(
      logs.slice(before).filter((l) => l.includes('rejected webhook request')).length,
    ).toBeGreaterThanOrEqual(7);
    // A throwing handler is an AdmissionReview with allowed=false and code 500, not a dropped connection.
    const boom = await post(port, ca, review('boom', { metadata: { name: 'x' } }), {}, 'POST', '/explode');
    expect(boom.status).toBe(200);
    expect(JSON.parse(boom.text)).toMatchObject({
      response: { uid: 'boom', allowed: false, status: { code: 500, message: 'handler bug' } },
    });
    // A handler slower than the handler timeout is answered for it: a 500, where its own answer would be allowed.
    const slow = await post(port, ca, review('slow', { metadata: { name: 'x' } }), {}, 'POST', '/slow');
    expect(JSON.parse(slow.text)).toMatchObject({
      response: { uid: 'slow', allowed: false, status: { code: 500 } },
    });
    // Still serving valid reviews.
    const ok = await post(port, ca, review('ok', { metadata: { name: 'fine' } }));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({
      response: { uid: 'ok', allowed: true, patchType: 'JSONPatch' },
    });
  });

  it('refuses TLS below 1.2 and clients that do not trust its certificate', async () => {
    const port = server.port();
    const legacy = await new Promise<string>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port, ca, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }, () =>
        resolve('connected'),
      );
      s.on('error', (err) => resolve(err.message));
    });
    expect(legacy).not.toBe('connected');
    const other = await generateDevCertificate();
    await expect(post(port, other.caPem, review('u', {}))).rejects.toThrow(
      /self-signed|unable to verify|certificate/i,
    );
    expect((await post(port, ca, review('after', { metadata: { name: 'x' } }))).status).toBe(200);
  });

  it('serves certificate files, reloads them when they change, and keeps the old pair when the new one is broken', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-wh-'));
    const certFile = path.join(dir, 'tls.crt');
    const keyFile = path.join(dir, 'tls.key');
    const first = await generateDevCertificate();
    const second = await generateDevCertificate();
    writeFileSync(certFile, first.certPem);
    writeFileSync(keyFile, first.keyPem);
    const fileLogs: string[] = [];
    const fileServer = new WebhookServer({
      port: 0,
      host: '127.0.0.1',
      certFile,
      keyFile,
      certPollIntervalMs: 100,
      logger: capture(fileLogs),
    });
    fileServer.register('/mutate', { handle: () => ({ allowed: true }) });
    const ac = new AbortController();
    const run = fileServer.start(ac.signal);
    await fileServer.ready();
    const port = fileServer.port();
    expect((await post(port, first.caPem, review('1', {}))).status).toBe(200);

    writeFileSync(certFile, 'garbage');
    await eventually(async () => expect(fileLogs.some((l) => l.includes('not a valid pair'))).toBe(true), {
      timeoutMs: 5000,
    });
    expect((await post(port, first.caPem, review('2', {}))).status).toBe(200);

    writeFileSync(keyFile, second.keyPem);
    writeFileSync(certFile, second.certPem);
    await eventually(async () => expect((await post(port, second.caPem, review('3', {}))).status).toBe(200), {
      timeoutMs: 5000,
    });
    await expect(post(port, first.caPem, review('4', {}))).rejects.toThrow();
    ac.abort();
    await run;

    writeFileSync(certFile, 'garbage');
    const broken = new WebhookServer({ port: 0, certFile, keyFile });
    await expect(broken.start(new AbortController().signal)).rejects.toBeInstanceOf(CertificateError);
  });
});
