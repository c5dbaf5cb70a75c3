// oc's connection flags on `tessera upgrade status`, against a real API server: --token and --as change who the
// API server sees, on the cluster's requests and on the alerts one (the thanos-querier Route lookup, which these
// users may not make), and --server with --certificate-authority replace the kubeconfig's cluster.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KubeClient } from '../../../src/runtime/client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { Namespaces } from '../../../src/runtime/resources.js';
import { installOpenShiftDevCrds } from '../../../src/updatestatus/api/dev-crds.js';
import { snapshotNow } from '../../../src/updatestatus/assess.js';
import {
  type UpgradeStatusFlags,
  parseUpgradeStatusOptions,
  runUpgradeStatus,
} from '../../../src/updatestatus/command.js';
import { loadSnapshot } from '../../../src/updatestatus/snapshot.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';
import { captureCommandIO } from '../../support/command-io.js';
import { fixturePath } from '../../support/fixtures.js';
import { createSnapshotObjects } from '../../support/updatestatus.js';

const fixtures = fixturePath('oc-upgrade-status');
/** An updating case: the command also reads alerts, so it looks up the thanos-querier Route. */
const CASE = '4.15.0-ec2-early';
const NS = 'tessera-flags';
const READERS = 'tessera-flags-readers';

const rbac = (plural: string, kind: string) => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced: false,
});

/** oc's notice when `user` may not read the Route the alerts are found through. */
const routeForbidden = (user: string): string =>
  "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
  `routes.route.openshift.io "thanos-querier" is forbidden: User "${user}" cannot get resource "routes" in API group ` +
  '"route.openshift.io" in the namespace "openshift-monitoring"\n';

const baseOptions = (kubeconfig: string, flags: UpgradeStatusFlags = {}) =>
  parseUpgradeStatusOptions({ kubeconfig, source: 'cluster', ...flags });

describe('upgrade status with oc connection flags', () => {
  let cluster: DevCluster;
  let work: string;
  let now: bigint;
  let token: string;
  let output: string;

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster('updatestatus-flags');
    work = mkdtempSync(path.join(tmpdir(), 'tessera-flags-'));
    output = readFileSync(path.join(fixtures, `${CASE}.output`), 'utf8');
    const admin = new KubeClient(await cluster.kubeConfig());
    try {
      await installOpenShiftDevCrds(admin);
      const { snapshot } = await loadSnapshot(path.join(fixtures, `${CASE}-cv.yaml`));
      now = snapshotNow(snapshot);
      await createSnapshotObjects(admin, snapshot);
      // Who may read the cluster (not its Routes): a service account, and the members of a group.
      await new ResourceClient<KubeObject>(admin, Namespaces).create({ metadata: { name: NS } });
      await new ResourceClient<KubeObject>(admin, {
        group: '',
        version: 'v1',
        plural: 'serviceaccounts',
        kind: 'ServiceAccount',
        namespaced: true,
      }).create({ metadata: { name: 'reader', namespace: NS } });
      await new ResourceClient<KubeObject>(admin, rbac('clusterroles', 'ClusterRole')).create({
        metadata: { name: READERS },
        rules: [
          {
            apiGroups: ['config.openshift.io', 'machineconfiguration.openshift.io'],
            resources: ['*'],
            verbs: ['get', 'list'],
          },
          { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] },
        ],
      } as KubeObject);
      await new ResourceClient<KubeObject>(admin, rbac('clusterrolebindings', 'ClusterRoleBinding')).create({
        metadata: { name: READERS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READERS },
        subjects: [
          { kind: 'ServiceAccount', name: 'reader', namespace: NS },
          { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: READERS },
        ],
      } as KubeObject);
      const request = await admin.request<{ status: { token: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${NS}/serviceaccounts/reader/token`,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      });
      token = request.status.token;
      // Until every resource the command reads is served (a CRD just established answers 429 for a moment).
      await eventually(
        () => runUpgradeStatus({ ...baseOptions(cluster.kubeconfigPath), now }, captureCommandIO()),
        {
          what: 'upgrade status as the admin',
        },
      );
    } finally {
      await admin.close();
    }
  });

  afterAll(async () => {
    await cluster?.stop({ wipe: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The command as the CLI runs it, with the admin's kubeconfig (a client certificate) unless `flags` name one. */
  async function upgradeStatus(flags: UpgradeStatusFlags): Promise<string> {
    const io = captureCommandIO();
    expect(await runUpgradeStatus({ ...baseOptions(cluster.kubeconfigPath, flags), now }, io)).toBe(0);
    return io.stdout();
  }

  it("--token: the API server sees the service account, not the kubeconfig's client certificate", async () => {
    expect(await upgradeStatus({ token })).toBe(
      routeForbidden(`system:serviceaccount:${NS}:reader`) + output,
    );
  });

  it("--as: a user without rights gets the API server's Forbidden; --as-group gives it its groups' rights", async () => {
    await expect(upgradeStatus({ as: 'jane' })).rejects.toThrow(
      'clusterversions.config.openshift.io "version" is forbidden: User "jane" cannot get resource "clusterversions"',
    );
    // Two groups, two Impersonate-Group headers: joined into one, neither would match the binding.
    expect(await upgradeStatus({ as: 'jane', asGroup: ['tessera-others', READERS] })).toBe(
      routeForbidden('jane') + output,
    );
  });

  it("--server and --certificate-authority replace the kubeconfig's server and CA", async () => {
    const adminKc = await cluster.kubeConfig();
    const real = adminKc.getCurrentCluster();
    const caFile = path.join(work, 'ca.crt');
    writeFileSync(
      caFile,
      real?.caFile ? readFileSync(real.caFile) : Buffer.from(real?.caData ?? '', 'base64'),
    );
    // The admin's credentials, with a server nothing listens on and no CA.
    const elsewhere = new KubeConfig();
    elsewhere.loadFromOptions({
      clusters: [{ name: 'elsewhere', server: 'https://127.0.0.1:1', skipTLSVerify: false }],
      users: adminKc.getUsers(),
      contexts: [{ name: 'elsewhere', cluster: 'elsewhere', user: adminKc.getCurrentUser()?.name ?? '' }],
      currentContext: 'elsewhere',
    });
    const kubeconfig = path.join(work, 'elsewhere.kubeconfig');
    writeFileSync(kubeconfig, elsewhere.exportConfig(), { mode: 0o600 });

    // The admin may look the Route up: it is not there.
    const notFound =
      "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts from Thanos: " +
      'routes.route.openshift.io "thanos-querier" not found\n';
    expect(await upgradeStatus({ kubeconfig, server: real?.server, certificateAuthority: caFile })).toBe(
      notFound + output,
    );
    // Without the CA the server's certificate is not trusted.
    await expect(upgradeStatus({ kubeconfig, server: real?.server })).rejects.toMatchObject({
      code: 'TESSERA_API_TRANSPORT',
    });
  });
});
