// Which webhook targets a run (or a cron) may name, class by class, under both settings of
// HANGAR_WEBHOOK_LOOPBACK: this machine is refused only when the setting is off (the hosted
// default), cloud metadata endpoints and Kubernetes-internal names always (as the hosted server
// does), private ranges never (the hosted server refuses them only under `disable_private_ips`,
// which is off by default). The rule over many generated addresses, then each class through run
// and cron creation with the hosted server's 422.

import t from 'tap'
import fc from 'fast-check'
import { webhookRefusal } from '../src/agent/webhooks.js'
import { makeApp } from './helpers.js'

const octet = fc.integer({ min: 0, max: 255 })
const ipv4 = (first: number | fc.Arbitrary<number>, second: number | fc.Arbitrary<number> = octet) =>
  fc.tuple(typeof first === 'number' ? fc.constant(first) : first, typeof second === 'number' ? fc.constant(second) : second, octet, octet)
    .map((parts) => parts.join('.'))
const word = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16))
const ipv6 = (first: fc.Arbitrary<number>) =>
  fc.tuple(first.map((n) => n.toString(16)), fc.array(word, { minLength: 7, maxLength: 7 })).map(([head, rest]) => [head, ...rest].join(':'))
const METADATA_V6: ReadonlySet<string> = new Set(['fd00:ec2:0:0:0:0:0:254', 'fd00:ec2:0:0:0:0:0:23', 'fe80:0:0:0:0:0:a9fe:a9fe'])
/**
 * DNS names of lowercase labels. None starts with `xn--`: that prefix marks an internationalized
 * name's ASCII form, and the URL parser refuses one that does not decode (`xn--.localhost` is no
 * host at all, so it is an invalid URL, not a localhost address).
 */
const dnsName = (pattern: RegExp) => fc.stringMatching(pattern).filter((name) => name.split('.').every((label) => !label.startsWith('xn--')))

/** Each class of host: addresses in it, and what a run naming one is told with loopback allowed and refused (null: accepted). */
const CLASSES: readonly { name: string; hosts: fc.Arbitrary<string>; allowed: string | null; refused: string | null }[] = [
  { name: 'loopback 127/8', hosts: ipv4(127), allowed: null, refused: 'localhost address' },
  { name: '"this network" 0/8', hosts: ipv4(0), allowed: null, refused: 'localhost address' },
  { name: 'IPv4-mapped loopback', hosts: ipv4(127).map((v4) => `[::ffff:${v4}]`), allowed: null, refused: 'localhost address' },
  { name: 'private 10/8', hosts: ipv4(10), allowed: null, refused: null },
  { name: 'private 172.16/12', hosts: ipv4(172, fc.integer({ min: 16, max: 31 })), allowed: null, refused: null },
  { name: 'private 192.168/16', hosts: ipv4(192, 168), allowed: null, refused: null },
  { name: 'shared 100.64/10', hosts: ipv4(100, fc.integer({ min: 64, max: 127 })).filter((h) => h !== '100.100.100.200'), allowed: null, refused: null },
  { name: 'unique local fc00::/7', hosts: ipv6(fc.integer({ min: 0xfc00, max: 0xfdff })).filter((h) => !METADATA_V6.has(h)).map((h) => `[${h}]`), allowed: null, refused: null },
  { name: 'link-local fe80::/10', hosts: ipv6(fc.integer({ min: 0xfe80, max: 0xfebf })).filter((h) => !METADATA_V6.has(h)).map((h) => `[${h}]`), allowed: null, refused: null },
  { name: 'link-local 169.254/16 (cloud metadata)', hosts: ipv4(169, 254), allowed: 'cloud metadata endpoint', refused: 'cloud metadata endpoint' },
  { name: 'IPv4-mapped link-local', hosts: ipv4(169, 254).map((v4) => `[::ffff:${v4}]`), allowed: 'cloud metadata endpoint', refused: 'cloud metadata endpoint' },
  { name: 'Kubernetes-internal names', hosts: dnsName(/^[a-z][a-z0-9-]{0,10}\.[a-z][a-z0-9-]{0,10}$/).map((h) => `${h}.svc.cluster.local`), allowed: 'Kubernetes internal DNS', refused: 'Kubernetes internal DNS' },
  { name: '*.localhost names', hosts: dnsName(/^[a-z][a-z0-9-]{0,10}$/).map((h) => `${h}.localhost`), allowed: null, refused: 'localhost address' },
]

const blocked = (reason: string | null) => (reason === null ? null : `Webhook host blocked: ${reason}`)

t.test('every address of a class is treated alike, as the hosted policy treats it, under both loopback settings', async (t) => {
  for (const { name, hosts, allowed, refused } of CLASSES) {
    fc.assert(fc.property(hosts, fc.boolean(), (host, loopback) => {
      const url = `http://${host}:8080/hook`
      return webhookRefusal(url, loopback) === blocked(loopback ? allowed : refused)
    }), { numRuns: 200 })
    t.pass(name)
  }
  t.equal(webhookRefusal('http://xn--.localhost:8080/hook', true), "Invalid webhook hostname ''", 'a name that does not decode is no host')
})

/** One host of each class, and the named cases besides (their sentences are the hosted server's). */
const TABLE: readonly [url: string, allowed: string | null, refused: string | null][] = [
  ['http://127.0.0.1:9000/hook', null, 'localhost address'],
  ['http://localhost/hook', null, 'localhost address'],
  ['http://host.docker.internal/hook', null, 'localhost address'],
  ['https://[::1]/hook', null, 'localhost address'],
  ['http://10.1.2.3/hook', null, null],
  ['http://172.20.0.5/hook', null, null],
  ['http://192.168.1.10/hook', null, null],
  ['http://[fd12:3456::1]/hook', null, null],
  ['http://169.254.169.254/latest/meta-data', 'cloud metadata endpoint', 'cloud metadata endpoint'],
  ['http://169.254.10.20/hook', 'cloud metadata endpoint', 'cloud metadata endpoint'],
  ['http://[fd00:ec2::254]/latest', 'cloud metadata endpoint', 'cloud metadata endpoint'],
  ['http://100.100.100.200/latest', 'cloud metadata endpoint', 'cloud metadata endpoint'],
  ['http://metadata.google.internal/computeMetadata/v1', 'cloud metadata endpoint', 'cloud metadata endpoint'],
  ['http://hooks.default.svc.cluster.local/hook', 'Kubernetes internal DNS', 'Kubernetes internal DNS'],
  ['https://hooks.example.com/run', null, null],
]

for (const loopback of [true, false]) {
  t.test(`run creation with HANGAR_WEBHOOK_LOOPBACK=${loopback}: each class is accepted or refused with the hosted server's 422`, async (t) => {
    const { api } = await makeApp(t, { config: { webhookLoopback: loopback } })
    for (const [url, allowed, refused] of TABLE) {
      const detail = blocked(loopback ? allowed : refused)
      // Delayed past the test's end (the clock stands still): an accepted run never calls its webhook.
      const res = await api.post('/runs', { assistant_id: 'agent', input: {}, webhook: url, after_seconds: 3600 })
      if (detail === null) t.same([res.status, res.body.kwargs?.webhook], [200, url], `${url} is accepted`)
      else t.same([res.status, res.body], [422, { detail }], `${url} is refused`)
    }
  })
}

t.test('a cron is refused the webhooks its runs would be, when it is created and when it is patched', async (t) => {
  const { api } = await makeApp(t, { config: { webhookLoopback: false } })
  const create = (webhook: string) => api.post('/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *', webhook })
  const answer = async (webhook: string) => {
    const res = await create(webhook)
    return [res.status, res.body]
  }
  t.same(await answer('http://localhost:3000/hook'), [422, { detail: 'Webhook host blocked: localhost address' }])
  t.same(await answer('http://169.254.169.254/'), [422, { detail: 'Webhook host blocked: cloud metadata endpoint' }])
  t.equal((await api.post('/runs/crons/count', {})).body, 0, 'no cron was created')

  const cron = (await create('https://hooks.example.com/cron')).body
  const patched = await api.patch(`/runs/crons/${cron.cron_id}`, { webhook: 'http://127.0.0.1/hook' })
  t.same([patched.status, patched.body], [422, { detail: 'Webhook host blocked: localhost address' }])
  t.equal((await api.get(`/runs/crons/${cron.cron_id}`)).body.payload.webhook, 'https://hooks.example.com/cron', 'a refused patch changes nothing')
})
