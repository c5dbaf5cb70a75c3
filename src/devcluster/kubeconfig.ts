// Writes kubeconfig files with embedded credentials, so a copy works from any directory.
import { stringify } from 'yaml';

export interface KubeconfigInput {
  readonly clusterName: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

export function renderKubeconfig(input: KubeconfigInput): string {
  const context = `${input.user}@${input.clusterName}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: input.clusterName,
        cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) },
      },
    ],
    users: [
      {
        name: input.user,
        user: {
          'client-certificate-data': b64(input.clientCertPem),
          'client-key-data': b64(input.clientKeyPem),
        },
      },
    ],
    contexts: [{ name: context, context: { cluster: input.clusterName, user: input.user } }],
    'current-context': context,
    preferences: {},
  });
}
