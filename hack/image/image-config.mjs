// Rewrites an image config (JSON on stdin, as `crane config` prints it) for one platform and prints it with sorted
// keys: platform, user, entrypoint, labels, and fixed times, so the digest depends on the inputs only. Node, not
// jq, so building the image needs nothing the project does not already require.
// Arguments: name=value pairs: arch created version revision source licenses title base node.
import { Buffer } from 'node:buffer';
import process from 'node:process';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const eq = a.indexOf('=');
    return [a.slice(0, eq), a.slice(eq + 1)];
  }),
);
// Read as a stream: a synchronous read of fd 0 fails with EAGAIN when the pipe is non-blocking.
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const config = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const layerComment = 'hack/image/build.sh';
config.architecture = args.arch;
config.os = 'linux';
config.created = args.created;
config.history = [
  { created: args.created, created_by: args.base, comment: layerComment },
  { created: args.created, created_by: args.node, comment: layerComment },
  {
    created: args.created,
    created_by: `tessera ${args.version}: dist/, package.json, production node_modules`,
    comment: layerComment,
  },
];
const labels = {
  'org.opencontainers.image.title': args.title,
  'org.opencontainers.image.version': args.version,
  'org.opencontainers.image.revision': args.revision,
  'org.opencontainers.image.licenses': args.licenses,
  'org.opencontainers.image.created': args.created,
};
if (args.source) labels['org.opencontainers.image.source'] = args.source;
config.config = {
  User: '65532:65532',
  WorkingDir: '/opt/tessera',
  Entrypoint: ['/usr/local/bin/node', '/opt/tessera/dist/cli/main.js'],
  Env: [
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'NODE_ENV=production',
    'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
  ],
  Labels: labels,
};

const sorted = (v) =>
  Array.isArray(v)
    ? v.map(sorted)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted(v[k])]),
        )
      : v;
process.stdout.write(`${JSON.stringify(sorted(config), null, 2)}\n`);
