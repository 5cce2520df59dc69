// What the real service fills in when a create leaves a field out, as the official Terraform
// provider's fake reproduces it (docs/control-plane-tools.md, "New fields and enums"). Pure data.

import { ResourceSpec, type SourceConfig } from '../schemas/deployments.js'

type Spec = NonNullable<SourceConfig['resource_spec']>

/** Sources that run an image someone else built: they get a resource spec when none is given. */
const IMAGE_SOURCES: readonly string[] = ['external_docker', 'internal_docker']

/** Every field of a resource spec, null: the real service answers them all. */
const NULL_SPEC = Object.fromEntries(Object.keys(ResourceSpec.properties).map((key) => [key, null])) as Spec

/** One replica, one CPU, 2 GiB: what an image deployment created without a `resource_spec` gets. */
export const DEFAULT_RESOURCE_SPEC: Readonly<Spec> = { ...NULL_SPEC, min_scale: 1, max_scale: 1, cpu: 1, memory_mb: 2048 }

/** A create's `source_config` with the service's defaults: `prod`, `build_on_push` false, an image deployment's resources. */
export function withDefaults(source: string, config: SourceConfig): SourceConfig {
  return {
    ...config,
    deployment_type: config.deployment_type ?? 'prod',
    build_on_push: config.build_on_push ?? false,
    resource_spec: config.resource_spec ?? (IMAGE_SOURCES.includes(source) ? { ...DEFAULT_RESOURCE_SPEC } : null),
  }
}
