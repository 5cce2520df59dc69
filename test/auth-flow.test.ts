import t from 'tap'
import { clientFor, makeApp, serveApp, someoneWaitsOn, TENANT_A, TENANT_B, turn } from './helpers.js'
import { completeFlow, consent, pathOf } from './oauth-helpers.js'

t.test('authenticate starts a pending flow whose URL is hangar\'s consent screen, with a real OAuth query', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo', 'read:user'] })
  t.equal(res.status, 200)
  t.same(Object.keys(res.body), ['status', 'url', 'auth_id', 'token', 'user_id', 'metadata'])
  t.equal(res.body.status, 'pending')
  t.equal(res.body.token, null)
  t.match(res.body.auth_id, /^[0-9a-f-]{36}$/)
  const url = new URL(res.body.url)
  t.equal(url.origin + url.pathname, 'http://localhost/_hangar/oauth/authorize')
  t.equal(url.searchParams.get('response_type'), 'code')
  t.equal(url.searchParams.get('client_id'), 'hangar-github-client')
  t.equal(url.searchParams.get('redirect_uri'), 'http://localhost:80/v2/auth/callback/github')
  t.equal(url.searchParams.get('scope'), 'repo read:user')
  t.ok(url.searchParams.get('state'))
  t.equal(url.searchParams.get('code_challenge'), null, 'github does not use PKCE')
})

t.test('opening the URL approves and redirects to the callback, which completes the flow; wait then answers completed', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const redirect = await consent(app, started.url)
  t.equal(redirect.status, 302)
  const location = new URL(redirect.location!)
  t.equal(location.pathname, '/v2/auth/callback/github')
  t.equal(location.searchParams.get('state'), new URL(started.url).searchParams.get('state'))
  t.ok(location.searchParams.get('code'))

  const page = await app.inject({ method: 'GET', url: pathOf(redirect.location!) })
  t.equal(page.statusCode, 200, 'the browser lands on a page, without any credentials')
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /Connected to GitHub/)

  const waited = await api.get(`/v2/auth/wait/${started.auth_id}`)
  t.equal(waited.body.status, 'completed')
  t.match(waited.body.token, /^hangar-oauth-/)
  const again = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  t.equal(again.status, 'completed', 'a token exists now, so authenticate answers with it')
  t.equal(again.token, waited.body.token)
  t.equal(again.metadata.provider_id, 'github')
})

t.test('the headless callback (POST) finalizes a flow from the code and state of the redirect', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const location = new URL((await consent(app, started.url)).location!)
  const body = { code: location.searchParams.get('code'), state: location.searchParams.get('state') }
  const res = await api.post('/v2/auth/callback/github', body)
  t.equal(res.status, 200)
  t.same(Object.keys(res.body), ['status', 'provider_id', 'auth_id', 'token_id'])
  t.equal(res.body.status, 'completed')
  t.equal(res.body.auth_id, started.auth_id)
  const reused = await api.post('/v2/auth/callback/github', body)
  t.equal(reused.status, 400)
  t.same(reused.body, { detail: 'This authorization code has already been used.' }, 'a code works once')
  const wrongCode = await api.post('/v2/auth/callback/github', { ...body, code: 'guess' })
  t.equal(wrongCode.status, 400)
  const other = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_B })
  t.same((await other.post('/v2/auth/callback/github', body)).body, { detail: 'Unknown or expired authorization request.' },
    'another workspace cannot finish the flow')
})

t.test('PKCE: the URL carries an S256 challenge, and a tampered challenge fails the exchange', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'slack', scopes: ['chat:write'] })).body
  const url = new URL(started.url)
  t.equal(url.searchParams.get('code_challenge_method'), 'S256')
  t.match(url.searchParams.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/)

  url.searchParams.delete('code_challenge')
  const missing = await consent(app, url.toString())
  t.equal(missing.status, 400)
  t.same(JSON.parse(missing.body), { detail: 'code_challenge is required by this provider.' })

  url.searchParams.set('code_challenge', 'A'.repeat(43))
  const tampered = new URL((await consent(app, url.toString())).location!)
  const res = await api.post('/v2/auth/callback/slack', { code: tampered.searchParams.get('code'), state: tampered.searchParams.get('state') })
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'PKCE verification failed: the code challenge does not match the verifier.' })

  const honest = new URL((await consent(app, started.url)).location!)
  const ok = await api.post('/v2/auth/callback/slack', { code: honest.searchParams.get('code'), state: honest.searchParams.get('state') })
  t.equal(ok.status, 200, 'the untampered URL still works')
})

t.test('the consent screen checks the request like a provider would', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: [] })).body
  const bad = async (change: (url: URL) => void, detail: string) => {
    const url = new URL(started.url)
    change(url)
    const res = await consent(app, url.toString())
    t.equal(res.status, 400, detail)
    t.same(JSON.parse(res.body), { detail }, detail)
  }
  await bad((u) => u.searchParams.set('client_id', 'someone-else'), 'client_id does not match the provider of this request.')
  await bad((u) => u.searchParams.set('redirect_uri', 'https://evil.example/cb'), 'redirect_uri is not the callback of this provider.')
  await bad((u) => u.searchParams.set('state', 'forged'), 'Unknown or expired authorization request.')
  await bad((u) => u.searchParams.set('response_type', 'token'), "Unsupported response_type 'token'; only 'code' is supported.")
  const missing = await app.inject({ method: 'GET', url: '/_hangar/oauth/authorize?client_id=x' })
  t.equal(missing.statusCode, 422, 'missing parameters are a validation error')
})

t.test('denying consent redirects with access_denied, and the callback reports it', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const denied = await consent(app, started.url, 'deny')
  const location = new URL(denied.location!)
  t.equal(location.searchParams.get('error'), 'access_denied')
  const res = await app.inject({ method: 'GET', url: pathOf(denied.location!) })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { detail: 'Authorization failed: access_denied (The user denied access.)' })
  t.equal((await api.get(`/v2/auth/wait/${started.auth_id}?timeout=0`)).body.status, 'pending', 'the flow is still open')
})

t.test('wait long-polls on the clock: completed as soon as the flow completes', async (t) => {
  const { app, api, clock } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const waiting = someoneWaitsOn(clock)
  const pending = api.get(`/v2/auth/wait/${started.auth_id}?timeout=30`)
  await waiting
  const location = (await consent(app, started.url)).location!
  await app.inject({ method: 'GET', url: pathOf(location) })
  const res = await pending
  t.equal(res.body.status, 'completed')
  t.match(res.body.token, /^hangar-oauth-/)
  t.equal(clock.listenerCount('change'), 0, 'the wait left nothing behind')
})

t.test('wait answers timeout once the timeout has passed on the clock, not before', async (t) => {
  const { api, clock } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const waiting = someoneWaitsOn(clock)
  let answered = false
  const pending = api.get(`/v2/auth/wait/${started.auth_id}?timeout=30`).then((res) => ((answered = true), res))
  await waiting
  clock.advance(29_999)
  await turn()
  t.equal(answered, false, 'still waiting at 29.999 s')
  clock.advance(1)
  t.same((await pending).body, { status: 'timeout', token: null })
})

t.test('wait: timeout=0 answers pending at once; unknown or foreign ids are not_found', async (t) => {
  const { app, api } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  t.same((await api.get(`/v2/auth/wait/${started.auth_id}?timeout=0`)).body, { status: 'pending', token: null })
  t.same((await api.get('/v2/auth/wait/no-such-flow')).body, { status: 'not_found', token: null })
  const other = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  t.same((await other.get(`/v2/auth/wait/${started.auth_id}?timeout=0`)).body, { status: 'not_found', token: null })
  t.equal((await api.get(`/v2/auth/wait/${started.auth_id}?timeout=soon`)).status, 422)
})

t.test('a flow expires after ten minutes of clock time', async (t) => {
  const { app, api, clock } = await makeApp(t)
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  clock.advance(10 * 60_000)
  t.equal((await consent(app, started.url)).status, 400)
  t.equal((await api.get(`/v2/auth/wait/${started.auth_id}?timeout=0`)).body.status, 'not_found')
})

t.test('an expired token makes authenticate answer token_expired with a new flow; force_new always starts one', async (t) => {
  const { app, api, clock } = await makeApp(t)
  const first = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  const forced = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], force_new: true })).body
  t.equal(forced.status, 'pending')
  clock.advance(60 * 60_000)
  const expired = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  t.equal(expired.status, 'token_expired')
  t.ok(expired.url)
  const second = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  t.not(second.token, first.token)
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body.token, second.token)
})

t.test('a token that lacks a requested scope does not satisfy authenticate', async (t) => {
  const { app, api } = await makeApp(t)
  await completeFlow(app, api, 'github', { scopes: ['repo'] })
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo', 'admin:org'] })).body.status, 'pending')
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: [] })).body.status, 'completed')
})

t.test('agents: the agent that started a flow is connected to its token; another agent must connect first', async (t) => {
  const { app, api } = await makeApp(t)
  const { tokenId, token } = await completeFlow(app, api, 'github', { scopes: ['repo'], agentId: 'agent-a' })
  const a = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], agent_id: 'agent-a' })).body
  t.equal(a.status, 'completed')
  t.equal(a.token, token)
  const b = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], agent_id: 'agent-b' })).body
  t.equal(b.status, 'connection_required')
  t.equal(b.metadata.token_id, tokenId)
  t.equal((await api.post('/v2/auth/agents/agent-b/connections', { oauth_token_id: tokenId })).status, 201)
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], agent_id: 'agent-b' })).body.status, 'completed')
})

t.test('tokens belong to a user: user_id in the request, else the caller\'s credential', async (t) => {
  const { app, api } = await makeApp(t)
  const { token } = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  const otherKey = clientFor(app, { 'x-api-key': 'another-user' })
  t.equal((await otherKey.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body.status, 'pending')
  const named = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], user_id: 'alice' })).body
  t.equal(named.status, 'pending')
  t.equal(named.user_id, 'alice')
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body.token, token)
})

t.test('authenticate: an unknown provider is 404, an unknown token_id is 404, a bad body is 422', async (t) => {
  const { api } = await makeApp(t)
  t.same((await api.post('/v2/auth/authenticate', { provider: 'myspace', scopes: [] })).body, { detail: "OAuth provider 'myspace' not found." })
  const tokenId = '0d0d0000-0000-4000-8000-000000000000'
  t.same((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: [], token_id: tokenId })).body, { detail: `Token ${tokenId} not found.` })
  const bad = await api.post('/v2/auth/authenticate', { provider: 'github' })
  t.equal(bad.status, 422)
  t.same(bad.body.detail, [{ type: 'missing', loc: ['body', 'scopes'], msg: 'Field required', input: { provider: 'github' } }])
})

t.test('over real HTTP, a plain GET of the URL (following redirects) completes the flow; URLs follow the Host', async (t) => {
  const { base } = await serveApp(t)
  const headers = { 'x-api-key': 'k', 'content-type': 'application/json' }
  const started = await (await fetch(`${base}/v2/auth/authenticate`, { method: 'POST', headers, body: JSON.stringify({ provider: 'google', scopes: ['email'] }) })).json() as { url: string; auth_id: string }
  t.ok(started.url.startsWith(`${base}/_hangar/oauth/authorize?`), 'the URL points back at this server')
  const page = await fetch(started.url)
  t.equal(page.status, 200)
  t.match(await page.text(), /Connected to Google/)
  const waited = await (await fetch(`${base}/v2/auth/wait/${started.auth_id}`, { headers })).json() as { status: string }
  t.equal(waited.status, 'completed')

  const proxied = await (await fetch(`${base}/v2/auth/authenticate`, {
    method: 'POST', headers: { ...headers, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'hangar.example.com' },
    body: JSON.stringify({ provider: 'github', scopes: [] }),
  })).json() as { url: string }
  t.ok(proxied.url.startsWith('https://hangar.example.com/_hangar/oauth/authorize?'), 'behind a proxy, its forwarded host')
})

t.test('HANGAR_PUBLIC_URL sets the base of the URLs hangar hands out', async (t) => {
  const { api } = await makeApp(t, { config: { publicUrl: 'https://auth.example.com:8443' } })
  const res = await api.post('/v2/auth/authenticate', { provider: 'github', scopes: [] })
  t.match(res.body.url, /^https:\/\/auth\.example\.com:8443\/_hangar\/oauth\/authorize\?/)
  t.equal(new URL(res.body.url).searchParams.get('redirect_uri'), 'https://auth.example.com:8443/v2/auth/callback/github')
})

t.test('the Auth Service admits an API key, a Bearer token or a workspace header alone; nothing is 401', async (t) => {
  const { app } = await makeApp(t)
  for (const headers of [{ 'x-api-key': 'k' }, { authorization: 'Bearer t' }, { 'x-tenant-id': TENANT_A }]) {
    const res = await app.inject({ method: 'GET', url: '/v2/auth/providers/github', headers })
    t.equal(res.statusCode, 200, JSON.stringify(headers))
  }
  const none = await app.inject({ method: 'GET', url: '/v2/auth/providers/github' })
  t.equal(none.statusCode, 401)
  t.same(none.json(), { detail: 'Missing authentication headers' })
  const deployments = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-tenant-id': TENANT_A } })
  t.equal(deployments.statusCode, 401, 'the deployments API still needs a credential')
})
