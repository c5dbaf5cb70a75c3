import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  containerdSocketPath,
  cniBridgeConfig,
  cniPluginWrapper,
  containerdConfig,
  hostUsesSlot,
  kubeletConfiguration,
  kubeletSocketPathProblem,
  kubeProxyConfiguration,
  nodeAddresses,
  nodeCgroup,
  realNodeDir,
  sysctlPath,
} from './real-node-config.js';

describe('real node configuration', () => {
  it("keeps the node's folder short enough for the kubelet's sockets under CI's TMPDIR, and says when it is not", () => {
    // The CI run that found it: the kubelet could not bind pod-resources/<10 digits> and stopped.
    const ciState = '/tmp/tessera-ci.qyL6Ca/tessera-it-HV89UT/real-pods-e092fa8e';
    expect(kubeletSocketPathProblem(realNodeDir(ciState, 0))).toBeUndefined();
    expect(kubeletSocketPathProblem(`${ciState}/real-nodes/real-amd64-0`)).toMatch(
      /too deep: the kubelet binds unix sockets of up to 116 bytes .* at most 107; .* at least 9 bytes shorter/,
    );
  });

  it('gives each node slot its own link and pod subnet, with a host interface name Linux accepts', () => {
    const a = nodeAddresses(7);
    expect(a).toMatchObject({ hostIp: '10.87.7.1', nodeIp: '10.87.7.2', podCidr: '10.88.7.0/24' });
    expect(nodeAddresses(255).hostLink.length).toBeLessThanOrEqual(15);
    expect(() => nodeAddresses(256)).toThrow(RangeError);
  });

  it('counts a slot as taken when any of its addresses or its interface is on the host', () => {
    const addresses = new Set(['10.87.0.1', '10.87.2.2']);
    const links = new Set(['tessera-n1']);
    expect([0, 1, 2, 3].map((slot) => hostUsesSlot(slot, addresses, links))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it("keeps each node's cgroup apart from same-named clusters' by its slot", () => {
    expect(nodeCgroup('tessera', 'real-amd64-0', 3)).toBe('/tessera/tessera-real-amd64-0-3');
  });

  it("keeps containerd's sockets within a unix socket path's 107 bytes, however deep the node's folder", () => {
    const deep = `/tmp/${'tessera-ci.abcdef/'.repeat(8)}real-nodes/real-amd64-0`;
    const socket = containerdSocketPath(deep);
    expect(Buffer.byteLength(`${socket}.ttrpc`)).toBeLessThanOrEqual(107);
    expect(containerdSocketPath(deep)).toBe(socket);
    expect(containerdSocketPath(`${deep}-other`)).not.toBe(socket);
  });

  it('maps a sysctl name to its /proc/sys file', () => {
    expect(sysctlPath('kernel.panic_on_oops')).toBe('/proc/sys/kernel/panic_on_oops');
  });

  it('keeps what a node mounts under its state directory and restricts OOM score adjustments', () => {
    const toml = containerdConfig({
      rootDir: '/s/root',
      stateDir: '/s/state',
      socket: '/s/c.sock',
      cniBinDir: '/s/cni',
      cniConfDir: '/s/net.d',
      registryConfigDir: '/s/certs.d',
      runc: '/usr/sbin/runc',
      streamAddress: '10.87.0.1',
    });
    expect(toml).toContain('netns_mounts_under_state_dir = true');
    expect(toml).toContain('restrict_oom_score_adj = true');
    expect(toml).toContain('SystemdCgroup = false');
    expect(toml).toContain('stream_server_address = "10.87.0.1"');
  });

  it('configures the kubelet for cgroup v1 without CAP_SYS_RESOURCE, in the node cgroup', () => {
    const config = parse(
      kubeletConfiguration({
        nodeIp: '10.87.0.2',
        clientCaFile: '/ca.crt',
        containerdSocket: '/c.sock',
        cgroupRoot: '/tessera/x-real-amd64-0',
        podCidr: '10.88.0.0/24',
        clusterDns: '10.87.0.1',
      }),
    ) as Record<string, unknown>;
    expect(config).toMatchObject({
      failCgroupV1: false,
      oomScoreAdj: 0,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: '/tessera/x-real-amd64-0',
      containerRuntimeEndpoint: 'unix:///c.sock',
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
      clusterDNS: ['10.87.0.1'],
      clusterDomain: 'cluster.local',
    });
    expect(config).not.toHaveProperty('singleProcessOOMKill');
  });

  it('leaves the global conntrack limits alone and masquerades Service traffic', () => {
    const config = parse(
      kubeProxyConfiguration({ nodeName: 'n', kubeconfig: '/k', podCidr: '10.88.0.0/24' }),
    ) as { conntrack: Record<string, unknown>; iptables: Record<string, unknown> };
    expect(config.conntrack).toMatchObject({ maxPerCore: 0, min: 0 });
    expect(config.iptables.masqueradeAll).toBe(true);
  });

  it('masquerades pod traffic leaving the pod subnet and keeps IPAM state where given', () => {
    const conf = JSON.parse(cniBridgeConfig(nodeAddresses(0), '/s/ipam')) as {
      plugins: Array<{ ipMasq: boolean; ipam: { dataDir: string; ranges: unknown } }>;
    };
    expect(conf.plugins[0]).toMatchObject({
      ipMasq: true,
      ipam: { dataDir: '/s/ipam', ranges: [[{ subnet: '10.88.0.0/24', gateway: '10.88.0.1' }]] },
    });
  });

  it("quotes the CNI wrapper's paths for the shell", () => {
    expect(cniPluginWrapper('/usr/bin/nsenter', "/a b/it's", '/bin/bridge')).toBe(
      `#!/bin/sh\nexec '/usr/bin/nsenter' --net='/a b/it'\\''s' '/bin/bridge' "$@"\n`,
    );
  });
});
