// `tessera image inspect`: which architectures an image runs on. Only commander is imported here; the
// implementation (HTTP client, TLS) loads when the command runs, so `tessera` starts fast.
import type { Command } from 'commander';
import { parseChoice } from '../cli/flags.js';
import { OUTPUT_FORMATS, type OutputFormat } from './render.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerImageCommands(program: Command): void {
  const image = program.command('image').description('inspect container images in their registries');

  image
    .command('inspect')
    .description('show the architectures an image supports, and per platform its os/arch/variant and digest')
    .argument(
      '<reference>',
      'image reference, as in a pod spec (nginx, quay.io/org/app:tag, host:5000/app@sha256:...)',
    )
    .option(
      '--pull-secret <file>',
      'credentials: a docker config.json, a .dockercfg, or a kubernetes.io/dockerconfigjson|dockercfg Secret (JSON or YAML); repeatable, earlier files win',
      collect,
      [],
    )
    .option('--insecure', "skip TLS verification for the image's registry (and allow plain http)", false)
    .option('--ca-file <file>', 'extra PEM CA bundle to trust; repeatable', collect, [])
    .option(
      '--trusted-realm-host <host>',
      "token service host (host or host:port) that may receive the credentials besides the registry's own host and parent domain; repeatable",
      collect,
      [],
    )
    .option(
      '--search-registry <host>',
      "registry (host or host:port) to look for a short name in, as the nodes' CRI-O does with OpenShift's containerRuntimeSearchRegistries; repeatable, tried in order (default: Docker Hub)",
      collect,
      [],
    )
    .option('-o, --output <format>', 'table, json or yaml', parseChoice(OUTPUT_FORMATS), 'table')
    .addHelpText(
      'after',
      '\nEnvironment: HTTPS_PROXY and HTTP_PROXY (or lower-case) send registry requests through an HTTP proxy (CONNECT tunnel, credentials as http://user:password@host:port); NO_PROXY lists the exceptions (domains, IPs, CIDRs, host:port, *), as for crane, skopeo and CRI-O. localhost and loopback are always direct.',
    )
    .action(
      async (
        reference: string,
        opts: {
          pullSecret: string[];
          insecure: boolean;
          caFile: string[];
          trustedRealmHost: string[];
          searchRegistry: string[];
          output: OutputFormat;
        },
      ) => {
        const [{ inspectImageCommand }, { proxyConfigFromEnvironment }] = await Promise.all([
          import('./inspect-command.js'),
          import('./proxy-config.js'),
        ]);
        // As crane and skopeo: HTTPS_PROXY / HTTP_PROXY / NO_PROXY (or lower-case) from the environment.
        const proxy = proxyConfigFromEnvironment(process.env);
        await inspectImageCommand(reference, { ...opts, ...(proxy ? { proxy } : {}) });
      },
    );
}
