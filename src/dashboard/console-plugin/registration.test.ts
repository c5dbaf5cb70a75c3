// What `tessera console-plugin register` decides from the API server's answers; the apply itself, with the real
// RBAC the bundle grants, is in test/integration/dashboard/console-plugin.test.ts.
import { describe, expect, it } from 'vitest';
import { withScriptedApiServer } from '../../runtime/testing/index.js';
import { ConsolePluginRegistrationError } from '../errors.js';
import { REGISTRATION_ROLE } from './manifests.js';
import { registerConsolePlugin } from './registration.js';

const status = (code: number, reason: string) => ({
  status: code,
  body: {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason,
    code,
    message: `${reason.toLowerCase()}`,
  },
});

describe('registerConsolePlugin', () => {
  it('does nothing where console.openshift.io/v1 is not served (no OpenShift console): one discovery call', async () => {
    await withScriptedApiServer(
      () => status(404, 'NotFound'),
      async (client, seen) => {
        await expect(registerConsolePlugin(client, 'ns1')).resolves.toEqual({ outcome: 'api-not-served' });
        expect(seen.calls()).toBe(1);
      },
    );
  });

  it('does nothing either when the group is served without consoleplugins', async () => {
    await withScriptedApiServer(
      () => ({ status: 200, body: { kind: 'APIResourceList', resources: [{ name: 'consolelinks' }] } }),
      async (client, seen) => {
        await expect(registerConsolePlugin(client, 'ns1')).resolves.toEqual({ outcome: 'api-not-served' });
        expect(seen.calls()).toBe(1);
      },
    );
  });

  it('names the ClusterRole to grant when the apply is forbidden', async () => {
    await withScriptedApiServer(
      (call) =>
        call === 1
          ? { status: 200, body: { kind: 'APIResourceList', resources: [{ name: 'consoleplugins' }] } }
          : status(403, 'Forbidden'),
      async (client) => {
        const failure = registerConsolePlugin(client, 'ns1');
        await expect(failure).rejects.toBeInstanceOf(ConsolePluginRegistrationError);
        await expect(failure).rejects.toThrow(`grant this service account ClusterRole ${REGISTRATION_ROLE}`);
        await expect(failure).rejects.toMatchObject({
          code: 'TESSERA_DASHBOARD_CONSOLE_PLUGIN_REGISTRATION',
        });
      },
    );
  });
});
