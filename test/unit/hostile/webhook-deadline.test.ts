// The webhook's time budget and failure contract (issue #10 item 19), on the real WebhookServer over loopback with a
// FakeClock, so budgets are proven by stepping time rather than by racing it: a handler that never answers is
// answered for it at its budget, which sits well under the API server's timeoutSeconds (so the caller reads the
// webhook's own explanation); the pod gating webhook admits unchanged on any failure; validating webhooks may deny.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/runtime/logging.js';
import type { AdmissionHandler } from '../../../src/runtime/webhook/admission.js';
import {
  API_SERVER_WEBHOOK_TIMEOUT_SECONDS,
  WEBHOOK_BUDGET_DEFAULTS,
  handlerBudgetMs,
} from '../../../src/runtime/webhook/server.js';
import { clusterConfig, pod } from '../../../src/podplacement/builders.js';
import { MUTATING_WEBHOOK } from '../../../src/podplacement/constants.js';
import { GatingWebhook } from '../../../src/podplacement/gating-webhook.js';
import { PodPlacementMetrics } from '../../../src/podplacement/metrics.js';
import {
  mutatingWebhookConfiguration,
  validatingWebhookConfiguration,
} from '../../../src/podplacement/webhook-configurations.js';
import { admission, post, review, startWebhook, type RunningWebhook } from './webhook-support.js';
import { FakeClock } from '../../../src/runtime/testing/index.js';

/** Lets socket I/O and promise continuations run (real time; the server's timers run on the FakeClock). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

let hook: RunningWebhook | undefined;
afterEach(async () => {
  await hook?.stop();
  hook = undefined;
});

/** A handler that never answers; `called` resolves with its abort signal once the server invoked it. */
function hanging(failurePolicy?: 'Fail' | 'Ignore'): AdmissionHandler & { called: Promise<AbortSignal> } {
  let markCalled: (signal: AbortSignal) => void = () => undefined;
  const called = new Promise<AbortSignal>((resolve) => (markCalled = resolve));
  return {
    failurePolicy,
    called,
    handle: (_request, signal) => {
      markCalled(signal);
      return new Promise(() => undefined);
    },
  };
}

describe('webhook handler time budget', () => {
  it("defaults to 70% of the webhook configurations' timeoutSeconds, leaving the rest for the transport", () => {
    const endpoint = { kind: 'url', baseUrl: 'https://127.0.0.1:9443' } as const;
    const webhooks = [
      ...mutatingWebhookConfiguration(endpoint, {}, undefined, 'operator-ns').webhooks,
      ...validatingWebhookConfiguration(endpoint, {}, { operatorNamespace: 'operator-ns' }).webhooks,
    ];
    expect(webhooks.length).toBeGreaterThan(0);
    for (const webhook of webhooks) {
      // If a configuration changes its timeout, the server's budget (handlerBudgetMs) must follow.
      expect(webhook.timeoutSeconds).toBe(API_SERVER_WEBHOOK_TIMEOUT_SECONDS);
    }
    expect(WEBHOOK_BUDGET_DEFAULTS.handlerTimeoutMs).toBe(
      handlerBudgetMs(API_SERVER_WEBHOOK_TIMEOUT_SECONDS),
    );
    expect(WEBHOOK_BUDGET_DEFAULTS.handlerTimeoutMs).toBe(7_000);
  });

  it('answers for a handler that never decides, exactly at its budget, with its own explanation', async () => {
    const clock = new FakeClock();
    const handler = hanging();
    hook = await startWebhook({ clock }, { '/validate': handler });
    const arrived = clock.now();
    let answered = false;
    const answer = post(hook, review('slow-1'), '/validate').finally(() => (answered = true));
    const signal = await handler.called;

    await clock.advance(WEBHOOK_BUDGET_DEFAULTS.handlerTimeoutMs - 1);
    await settle();
    expect(answered).toBe(false);
    expect(signal.aborted).toBe(false);

    await clock.advance(1);
    const response = admission(await answer);
    // The API server would still be waiting (it gives up at timeoutSeconds): the user sees this message.
    expect(clock.now() - arrived).toBeLessThan(API_SERVER_WEBHOOK_TIMEOUT_SECONDS * 1000);
    expect(response).toMatchObject({ uid: 'slow-1', allowed: false, status: { code: 500 } });
    expect(response.status?.message).toContain(
      `did not decide within its ${WEBHOOK_BUDGET_DEFAULTS.handlerTimeoutMs} ms budget`,
    );
    expect(signal.aborted).toBe(true);
    expect(hook.server.stats().refusals.handler_timeout).toBe(1);
  });

  it("admits unchanged when a handler with failurePolicy 'Ignore' misses its budget", async () => {
    const clock = new FakeClock();
    const handler = hanging('Ignore');
    hook = await startWebhook({ clock, handlerTimeoutMs: 2_000 }, { '/mutate': handler });
    const answer = post(hook, review('slow-2'));
    await handler.called;
    await clock.advance(2_000);
    expect(admission(await answer)).toEqual({ uid: 'slow-2', allowed: true });
  });

  it('lets a validating handler that throws deny, with code 500 and its message', async () => {
    hook = await startWebhook(
      {},
      {
        '/validate': {
          handle: () => {
            throw new Error('config store unreachable');
          },
        },
      },
    );
    expect(admission(await post(hook, review('v1'), '/validate'))).toEqual({
      uid: 'v1',
      allowed: false,
      status: { code: 500, message: 'config store unreachable' },
    });
    expect(hook.server.stats().refusals.handler_error).toBe(1);
  });
});

describe('pod gating webhook never denies', () => {
  function gatingWebhook(clusterConfigFn: () => ReturnType<typeof clusterConfig>) {
    const registry = new Registry();
    const metrics = new PodPlacementMetrics(registry);
    const webhook = new GatingWebhook({
      clusterConfig: clusterConfigFn,
      podPlacementConfigs: () => [],
      operatorNamespace: 'operator-ns',
      clock: new FakeClock(),
      logger: silentLogger,
      metrics,
    });
    return { webhook, registry };
  }

  it('admits the pod unchanged (no patch) and counts the failure when its handler throws', async () => {
    const { webhook, registry } = gatingWebhook(() => {
      throw new Error('cache exploded');
    });
    expect(webhook.failurePolicy).toBe('Ignore');
    hook = await startWebhook({}, { [MUTATING_WEBHOOK.path]: webhook });
    const object = pod('web', 'apps').withImages('registry.example/app:1').build();
    const response = admission(await post(hook, review('g1', object), MUTATING_WEBHOOK.path));
    expect(response).toEqual({ uid: 'g1', allowed: true });
    const errors = await registry.getSingleMetric('tessera_podplacement_webhook_errors_total')?.get();
    expect(errors?.values[0]?.value).toBe(1);
  });

  it('still gates normally when nothing fails', async () => {
    const { webhook } = gatingWebhook(() => clusterConfig());
    hook = await startWebhook({}, { [MUTATING_WEBHOOK.path]: webhook });
    const object = pod('web', 'apps').withImages('registry.example/app:1').build();
    const response = admission(await post(hook, review('g2', object), MUTATING_WEBHOOK.path));
    expect(response.allowed).toBe(true);
    expect(response.patch).toBeDefined();
  });
});
