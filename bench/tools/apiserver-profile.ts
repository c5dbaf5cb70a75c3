// kube-apiserver's CPU profile from a dev cluster started with `apiServerProfiling: true`: where the API server's
// time goes under a benchmark's load. Read it with `go tool pprof -top <cache>/bin/kubernetes-<v>/kube-apiserver FILE`.
import https from 'node:https';
import type { DevCluster } from '../../src/devcluster/cluster.js';

/** The API server's CPU profile over the next `seconds`, fetched as the cluster's admin (pprof's protobuf). */
export async function apiServerCpuProfile(cluster: DevCluster, seconds: number): Promise<Buffer> {
  const options: https.RequestOptions = {};
  await (await cluster.kubeConfig()).applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    https
      .get(`${cluster.server}/debug/pprof/profile?seconds=${Math.ceil(seconds)}`, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(
                new Error(
                  `kube-apiserver's profile: HTTP ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}; start the cluster with apiServerProfiling`,
                ),
              ),
        );
      })
      .on('error', reject);
  });
}
