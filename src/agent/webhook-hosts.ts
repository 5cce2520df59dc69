// Which webhook hosts the hosted server's SSRF policy singles out, read from the URL's host alone.
// The hosted server (langgraph_api/webhook.py over langchain-core's SSRF policy) refuses this
// machine (`localhost address`) unless `webhooks.url.disable_loopback` is false, and always refuses
// cloud metadata endpoints (all of 169.254.0.0/16 and a few provider addresses and names) and
// Kubernetes-internal names; private ranges (10/8, 172.16/12, 192.168/16, fc00::/7, …) it refuses
// only under `disable_private_ips`, off by default, which hangar does not emulate. hangar makes no
// DNS lookup (it runs offline): a name counts by what it is, and `*.localhost` is this machine.
// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) counts as the IPv4 address.

import { BlockList, isIP } from 'node:net'

/** Why a host is singled out, in the hosted policy's words (what follows `Webhook host blocked: `). */
export type HostReason = 'localhost address' | 'cloud metadata endpoint' | 'Kubernetes internal DNS'

/** Whether an address (of its family) falls in one of the subnets. */
function inSubnets(subnets: readonly (readonly [string, number])[]): (address: string, family: 'ipv4' | 'ipv6') => boolean {
  const list = new BlockList()
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, isIP(network) === 4 ? 'ipv4' : 'ipv6')
  return (address, family) => list.check(address, family)
}

/** This machine: the loopback ranges, the "this network" range, and the unspecified IPv6 address (hangar's addition: it reaches this machine too). */
const isLoopbackAddress = inSubnets([['127.0.0.0', 8], ['0.0.0.0', 8], ['::1', 128], ['::', 128]])
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', 'localhost.localdomain', 'host.docker.internal'])

/** Cloud metadata services: the whole IPv4 link-local range, and the providers' other addresses. */
const isMetadataAddress = inSubnets([
  ['169.254.0.0', 16], ['100.100.100.200', 32], ['fd00:ec2::254', 128], ['fd00:ec2::23', 128], ['fe80::a9fe:a9fe', 128],
])
const METADATA_NAMES: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.amazonaws.com', 'metadata', 'instance-data'])
const KUBERNETES_SUFFIX = '.svc.cluster.local'

/** Why the hosted policy singles out a URL's host (`hostname` as WHATWG URL gives it, IPv6 in brackets), or undefined. */
export function hostReason(hostname: string): HostReason | undefined {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  const family = isIP(host)
  if (family !== 0) {
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (isLoopbackAddress(host, type)) return 'localhost address'
    if (isMetadataAddress(host, type)) return 'cloud metadata endpoint'
    return undefined
  }
  const name = host.replace(/\.$/, '')
  if (LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return 'localhost address'
  if (METADATA_NAMES.has(name)) return 'cloud metadata endpoint'
  if (name.endsWith(KUBERNETES_SUFFIX)) return 'Kubernetes internal DNS'
  return undefined
}
