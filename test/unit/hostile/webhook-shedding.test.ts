// Callers that switch gating off by holding the webhook's shared budgets (issue #20 item 3), against the real
// WebhookServer on loopback with the deployed budgets:
// - bodies declared large and trickled: memory is reserved as bytes arrive, so 4 such connections hold a few
//   hundred KiB, not the whole 48 MiB, and every legitimate review is answered;
// - 300 idle or trickling connections at the 256-connection cap: each new connection takes the place of the longest
//   idle or stuck one, so every legitimate review is answered;
// - with a client CA (the API server's): strangers at the cap and holding memory can neither close the API server's
//   pooled connection nor take the memory kept for it.
// Outcomes are counted; waits are for observed state, never for time.
import type tls from 'node:tls';
import https from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '../../../src/runtime/pki/certificates.js';
import {
  MiB,
  collect,
  connectTls,
  holdConnections,
  postAs,
  review,
  startWebhook,
  until,
  type HeldConnections,
  type RunningWebhook,
} from './webhook-support.js';

const HEAD = 'POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n';

/**
 * The deployed budgets, but timeouts long enough that no slow caller is cut by one during a test on a slow machine:
 * what lets the legitimate reviews in must be the budget under test, not a timeout.
 */
const PATIENT = {
  headersTimeoutMs: 120_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 120_000,
} as const;

let hook: RunningWebhook | undefined;
let held: HeldConnections | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  held?.release();
  held = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
  await hook?.stop();
  hook = undefined;
});

/** Statuses of `count` legitimate reviews sent at once, each on its own connection. */
async function legitimateReviews(webhook: RunningWebhook, count: number): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => postAs(webhook, review(`legit-${i}`))),
  );
  return answers.map((a) => a.status);
}

/**
 * Opens a connection that declares a `declared`-byte body, sends `sent` bytes of it and then one byte a second.
 * Resolves once the server holds memory for what was sent (or closed the connection).
 */
async function slowBody(webhook: RunningWebhook, declared: number, sent: number): Promise<tls.TLSSocket> {
  const before = webhook.server.stats().inFlightBytes;
  const socket = await connectTls(webhook);
  const closed = collect(socket);
  let gone = false;
  void closed.then(() => (gone = true));
  socket.write(`${HEAD}Content-Length: ${declared}\r\n\r\n{"a":"${'x'.repeat(sent - 6)}`);
  await until(() => gone || webhook.server.stats().inFlightBytes - before >= 2 * sent);
  const trickle = setInterval(() => socket.writable && socket.write('x'), 1_000);
  cleanups.push(() => {
    clearInterval(trickle);
    socket.destroy();
  });
  return socket;
}

describe('webhook budgets held by slow callers', () => {
  it('answers all 129 legitimate reviews while 4 connections declare 6 MiB bodies and trickle them', async () => {
    hook = await startWebhook(PATIENT);
    // Declared: 4 x 6 MiB, which used to reserve 4 x 12 MiB = the whole 48 MiB budget before a byte arrived.
    const attackers = [];
    for (let i = 0; i < 4; i++) attackers.push(await slowBody(hook, 6 * MiB, 64 * 1024));
    // What they hold is what they sent (64 KiB each, counted twice, plus its few JSON values).
    expect(hook.server.stats().inFlightBytes).toBeLessThan(4 * 3 * 64 * 1024);
    const statuses = await legitimateReviews(hook, 129);
    expect(statuses.filter((s) => s === 200)).toHaveLength(129);
    expect(hook.server.stats().refusals.busy).toBeUndefined();
    // Nobody had to be cut for that: the slow callers are still connected (the request timeout still bounds them,
    // see webhook-connections.test.ts).
    expect(attackers.every((socket) => !socket.destroyed)).toBe(true);
  }, 60_000);

  it('answers every legitimate review while 300 idle or trickling connections sit at the 256-connection cap', async () => {
    hook = await startWebhook(PATIENT);
    const modes = ['idle', 'trickle-head', 'trickle-body'] as const;
    held = await holdConnections(hook, 300, (i) => modes[i % 3] ?? 'idle');
    // The flood fills the cap; connections past it took the place of the oldest ones.
    expect(await hook.server.openConnections()).toBe(256);
    expect(hook.server.stats().refusals.connection_shed).toBe(44);
    const statuses = await legitimateReviews(hook, 129);
    expect(statuses.filter((s) => s === 200)).toHaveLength(129);
    // Each legitimate connection took the place of at most one of the flood's.
    expect(held.open()).toBeGreaterThanOrEqual(256 - 129);
    expect(await hook.server.openConnections()).toBeLessThanOrEqual(256);
  }, 60_000);
});

describe('webhook with the API server client CA (--webhook-client-ca)', () => {
  it("keeps the API server's connections and memory out of strangers' reach", async () => {
    const clientCa = await createCertificateAuthority('kube-apiserver-client-ca');
    const apiserver = await clientCa.issue({ commonName: 'kube-apiserver', usage: 'client' });
    const impostor = await (
      await createCertificateAuthority('someone-else')
    ).issue({ commonName: 'kube-apiserver', usage: 'client' });
    hook = await startWebhook({ ...PATIENT, clientCa: clientCa.certPem });
    const agent = new https.Agent({
      keepAlive: true,
      maxSockets: 1,
      ca: hook.ca,
      cert: apiserver.certPem,
      key: apiserver.keyPem,
    });
    cleanups.push(() => agent.destroy());
    const first = await postAs(hook, review('apiserver-1'), { agent });
    expect(first.status).toBe(200);
    await until(async () => (await hook?.server.openConnections('verified')) === 1);

    // Strangers fill their connection cap (the API server's pooled connection would be the first to go: it is idle)
    // and try to hold the in-flight memory with 5 bodies of 5 MiB sent fast, then trickled.
    held = await holdConnections(hook, 300, 'idle');
    for (let i = 0; i < 5; i++) await slowBody(hook, 6 * MiB, 5 * MiB);
    // Strangers hold at most their third of the 48 MiB budget.
    expect(hook.server.stats().inFlightBytes).toBeLessThanOrEqual(16 * MiB);

    // The API server's pooled connection survived, and a 4 MiB review (~8 MiB estimated) still fits.
    const pooled = await postAs(hook, review('apiserver-2'), { agent });
    expect(pooled).toMatchObject({ status: 200, reusedSocket: true });
    const large = review('apiserver-large', {
      metadata: { name: 'big', annotations: { a: 'x'.repeat(4 * MiB) } },
    });
    expect((await postAs(hook, large, { cert: apiserver.certPem, key: apiserver.keyPem })).status).toBe(200);
    // Callers without a verified certificate (the API server's CRD conversion requests carry none) are still served.
    expect(
      (await postAs(hook, review('impostor'), { cert: impostor.certPem, key: impostor.keyPem })).status,
    ).toBe(200);
    expect((await postAs(hook, review('anonymous'))).status).toBe(200);
  }, 60_000);

  it('refuses a client CA without a certificate, naming the option', async () => {
    await expect(startWebhook({ clientCa: 'not a certificate' })).rejects.toThrow(
      /invalid option clientCa: holds no PEM certificate/,
    );
  });
});
