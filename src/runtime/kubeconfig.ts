// The one way a command loads the kubeconfig its --kubeconfig flag names. @kubernetes/client-node is imported on
// the first call, not with the runtime: importing it costs most of a second, which a command that never talks to a
// cluster must not pay.
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidArgumentError } from './errors.js';

/**
 * `file` when given (the --kubeconfig flag), else client-node's default chain: $KUBECONFIG, ~/.kube/config, then
 * the pod's service account (in-cluster). A file that cannot be read or parsed is an InvalidArgumentError naming
 * `flag`.
 */
export async function loadKubeConfig(file: string | undefined, flag = '--kubeconfig'): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (!file) {
    kubeConfig.loadFromDefault();
    return kubeConfig;
  }
  try {
    kubeConfig.loadFromFile(file);
  } catch (err) {
    throw new InvalidArgumentError(
      flag,
      `cannot load ${file} (${err instanceof Error ? err.message : String(err)}); give a kubeconfig file`,
    );
  }
  return kubeConfig;
}
