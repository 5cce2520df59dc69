/** Where each deployment's own agent server is served: the prefix of its `url`. */
export const DEPLOYED_AGENT_PREFIX = '/deployments/:deployment_id/agent'
