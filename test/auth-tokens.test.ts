import t from 'tap'
import { clientFor, makeApp } from './helpers.js'
import { completeFlow } from './oauth-helpers.js'

t.test('the caller lists their tokens as summaries, without the secret token value', async (t) => {
  const { app, api } = await makeApp(t)
  const { tokenId, token } = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  await completeFlow(app, api, 'slack', { scopes: ['chat:write'] })
  const all = await api.get('/v2/auth/tokens')
  t.equal(all.status, 200)
  t.equal(all.body.length, 2)
  const github = all.body[0]
  t.same(Object.keys(github), ['id', 'provider_id', 'provider_account_label', 'scopes', 'expires_at', 'is_default', 'created_at', 'updated_at'])
  t.same({ id: github.id, provider: github.provider_id, label: github.provider_account_label, scopes: github.scopes, default: github.is_default },
    { id: tokenId, provider: 'github', label: 'octocat', scopes: ['repo'], default: true })
  t.equal(github.expires_at, '2025-01-01T01:00:00.000Z', 'an hour after issue')
  t.notMatch(all.text, new RegExp(token), 'the token value is not listed')
  t.same((await api.get('/v2/auth/tokens?provider_id=slack')).body.map((x: any) => x.provider_id), ['slack'])
  t.same((await clientFor(app, { 'x-api-key': 'someone-else' }).get('/v2/auth/tokens')).body, [], 'another user sees none')
})

t.test('exists says whether the caller has a token for a provider', async (t) => {
  const { app, api } = await makeApp(t)
  t.same((await api.get('/v2/auth/tokens/exists?provider_id=github')).body, { has_token: false })
  await completeFlow(app, api, 'github')
  t.same((await api.get('/v2/auth/tokens/exists?provider_id=github')).body, { has_token: true })
  const missing = await api.get('/v2/auth/tokens/exists')
  t.equal(missing.status, 422)
  t.same(missing.body.detail, [{ type: 'missing', loc: ['query', 'provider_id'], msg: 'Field required', input: null }])
})

t.test('the label and default flag can be changed by the owner only; a newer default replaces the old one', async (t) => {
  const { app, api } = await makeApp(t)
  const first = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  const second = await completeFlow(app, api, 'github', { scopes: ['gist'] })
  const list = (await api.get('/v2/auth/tokens?provider_id=github')).body
  t.same(list.map((x: any) => x.is_default), [false, true], 'the newest flow made its token the default')
  const res = await api.patch(`/v2/auth/tokens/${first.tokenId}/metadata`, { provider_account_label: 'work account', is_default: true })
  t.equal(res.status, 200)
  t.equal(res.body.provider_account_label, 'work account')
  t.equal(res.body.is_default, true)
  const after = (await api.get('/v2/auth/tokens?provider_id=github')).body
  t.same(after.find((x: any) => x.id === second.tokenId).is_default, false)
  const stranger = clientFor(app, { 'x-api-key': 'stranger' })
  t.same((await stranger.patch(`/v2/auth/tokens/${first.tokenId}/metadata`, { provider_account_label: 'mine' })).body,
    { detail: `Token ${first.tokenId} not found.` })
})

t.test('delete one token (204) or all of a provider\'s for the caller', async (t) => {
  const { app, api } = await makeApp(t)
  const a = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  await completeFlow(app, api, 'github', { scopes: ['gist'] })
  await completeFlow(app, api, 'google', { scopes: ['email'] })
  const one = await api.delete(`/v2/auth/tokens/${a.tokenId}`)
  t.equal(one.status, 204)
  t.equal(one.text, '')
  t.equal((await api.delete(`/v2/auth/tokens/${a.tokenId}`)).status, 404)
  const all = await api.delete('/v2/auth/tokens?provider_id=github')
  t.same(all.body, { deleted: 1 })
  t.same((await api.get('/v2/auth/tokens')).body.map((x: any) => x.provider_id), ['google'])
})

t.test('the workspace\'s Slack tokens: exists, and revoke all (for every user)', async (t) => {
  const { app, api } = await makeApp(t)
  t.same((await api.get('/v2/auth/tokens/workspace/slack/exists')).body, { has_token: false })
  await completeFlow(app, api, 'slack')
  await completeFlow(app, clientFor(app, { 'x-api-key': 'teammate' }), 'slack')
  await completeFlow(app, api, 'github')
  t.same((await api.get('/v2/auth/tokens/workspace/slack/exists')).body, { has_token: true })
  t.same((await api.delete('/v2/auth/tokens/workspace/slack')).body, { deleted: 2 })
  t.same((await api.get('/v2/auth/tokens/workspace/slack/exists')).body, { has_token: false })
  t.same((await api.get('/v2/auth/tokens')).body.map((x: any) => x.provider_id), ['github'], 'other providers keep theirs')
})

t.test('agent connections: list, create (201), duplicate (409), delete (204), unknowns (404)', async (t) => {
  const { app, api } = await makeApp(t)
  const { tokenId } = await completeFlow(app, api, 'github', { scopes: ['repo'] })
  t.same((await api.get('/v2/auth/agents/bot/connections')).body, { data: [] })
  const created = await api.post('/v2/auth/agents/bot/connections', { oauth_token_id: tokenId })
  t.equal(created.status, 201)
  t.same(Object.keys(created.body), ['id', 'agent_id', 'oauth_token_id', 'provider_id', 'provider_account_label', 'scopes', 'expires_at', 'created_by', 'created_at'])
  t.equal(created.body.provider_id, 'github')
  t.same(created.body.scopes, ['repo'])
  const list = (await api.get('/v2/auth/agents/bot/connections')).body.data
  t.same(list.map((c: any) => c.id), [created.body.id])
  const dup = await api.post('/v2/auth/agents/bot/connections', { oauth_token_id: tokenId })
  t.equal(dup.status, 409)
  t.same(dup.body, { detail: `Agent bot is already connected to token ${tokenId}.` })
  t.equal((await api.post('/v2/auth/agents/bot/connections', { oauth_token_id: 'nope' })).status, 404)
  t.equal((await clientFor(app, { 'x-api-key': 'x' }).post('/v2/auth/agents/bot/connections', { oauth_token_id: tokenId })).status, 404,
    'only the token\'s owner can connect it')
  t.equal((await api.delete(`/v2/auth/agents/bot/connections/${created.body.id}`)).status, 204)
  t.equal((await api.delete(`/v2/auth/agents/bot/connections/${created.body.id}`)).status, 404)
  t.same((await api.get('/v2/auth/agents/bot/connections')).body, { data: [] })
})
