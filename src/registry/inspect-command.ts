// The `tessera image inspect` command: loads credentials and CA files, inspects one image (no cache: a command
// runs once) and prints it. Errors propagate to the CLI's handler, which prints the message and exits 1.
import { readFile } from 'node:fs/promises';
import {
  parseDockerCfg,
  parseDockerConfigJson,
  entriesOfPullSecret,
  type DockerConfigEntry,
} from './docker-config.js';
import { isRecord } from '../runtime/light.js';
import { InvalidPullSecretError } from './errors.js';
import { Keyring } from './keyring.js';
import { emptyRegistryPolicy } from './mirrors.js';
import type { ProxyConfig } from './proxy-config.js';
import { RegistryInspector } from './registry-inspector.js';
import { registryText } from './registry-text.js';
import { inspectionDocument, renderInspectionTable, type OutputFormat } from './render.js';
import { resolveShortName } from './short-names.js';

export interface InspectCommandOptions {
  readonly pullSecret: readonly string[];
  readonly insecure: boolean;
  readonly caFile: readonly string[];
  /** Token realm hosts trusted with credentials besides the registry's own host and domain. Default: none. */
  readonly trustedRealmHost?: readonly string[];
  /** -o, checked by its flag parser (src/registry/cli.ts). */
  readonly output: OutputFormat;
  /** Where a short name is looked for, in order, as the nodes' runtime does (short-names.ts). Default: Docker Hub. */
  readonly searchRegistry?: readonly string[];
  /** Egress proxy, from HTTPS_PROXY / HTTP_PROXY / NO_PROXY (read by cli.ts). Default: none. */
  readonly proxy?: ProxyConfig;
}

/** Reads one credentials file in any of the accepted shapes. */
export async function entriesOfFile(file: string): Promise<DockerConfigEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InvalidPullSecretError(
      file,
      `cannot read the file (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
  }
  let doc: unknown;
  if (text.trimStart().startsWith('{')) {
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new InvalidPullSecretError(file, 'the content is not valid JSON', { cause: err });
    }
  } else {
    const { parse } = await import('yaml');
    try {
      doc = parse(text);
    } catch (err) {
      throw new InvalidPullSecretError(file, 'the content is neither JSON nor YAML', { cause: err });
    }
  }
  if (!isRecord(doc)) throw new InvalidPullSecretError(file, 'expected a docker config or a Secret object');
  if (doc.kind === 'Secret') {
    const data = isRecord(doc.data) ? (doc.data as Record<string, string>) : {};
    return entriesOfPullSecret({ type: typeof doc.type === 'string' ? doc.type : '', data }, file);
  }
  if ('auths' in doc) return parseDockerConfigJson(JSON.stringify(doc), file);
  return parseDockerCfg(JSON.stringify(doc), file);
}

export async function inspectImageCommand(reference: string, options: InspectCommandOptions): Promise<void> {
  const format = options.output;
  const searchRegistries = options.searchRegistry ?? [];
  // Validates the reference; --insecure applies to every registry the image may come from.
  const { candidates } = resolveShortName(reference, searchRegistries);
  const entries = (await Promise.all(options.pullSecret.map(entriesOfFile))).flat();
  const caCertificates = await Promise.all(options.caFile.map((f) => readFile(f, 'utf8')));
  const policy = {
    ...emptyRegistryPolicy,
    searchRegistries,
    insecureRegistries: options.insecure ? [...new Set(candidates.map((c) => c.registry))] : [],
  };
  // node:https instead of undici: a one-shot command should not pay ~100 ms to load an HTTP library (behind a
  // proxy the transport uses undici, which tunnels).
  const inspector = new RegistryInspector({
    ...(options.proxy ? { proxy: options.proxy } : {}),
    caCertificates,
    policy: () => policy,
    trustedRealmHosts: options.trustedRealmHost ?? [],
    httpClient: 'node',
    // The person running the command is the operator: show the detail the error text keeps uniform for tenants.
    onUnreachable: (event) =>
      process.stderr.write(
        `tessera: ${event.what}: ${event.code || 'error'}: ${registryText(event.message)}\n`,
      ),
  });
  try {
    const inspection = await inspector.inspect(reference, { keyring: Keyring.of(entries) });
    if (format === 'table') process.stdout.write(renderInspectionTable(inspection));
    else if (format === 'json')
      process.stdout.write(`${JSON.stringify(inspectionDocument(inspection), null, 2)}\n`);
    else {
      const { stringify } = await import('yaml');
      process.stdout.write(stringify(inspectionDocument(inspection)));
    }
  } finally {
    await inspector.close();
  }
}
