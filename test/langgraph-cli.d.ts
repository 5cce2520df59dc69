// Types for the parts of the official JS CLI (@langchain/langgraph-cli, which ships no declarations
// for them) that the deployment tests call, so the tests send exactly what `langgraph deploy` sends.

declare module '@langchain/langgraph-cli/dist/cli/utils/host-backend.mjs' {
  export class HostBackendError extends Error {
    statusCode: number | undefined
  }
  export class HostBackendClient {
    constructor(baseUrl: string, apiKey: string, tenantId?: string)
    createDeployment(args: { name: string; deploymentType: string; source: string; configPath?: string; secrets?: { name: string; value: string }[] }): Promise<any>
    getDeployment(deploymentId: string): Promise<any>
    requestUploadUrl(deploymentId: string): Promise<any>
    requestPushToken(deploymentId: string): Promise<any>
    updateDeployment(deploymentId: string, imageUri: string, args?: { secrets?: { name: string; value: string }[] }): Promise<any>
    updateDeploymentInternalSource(deploymentId: string, args: { sourceTarballPath: string; configPath: string; secrets?: { name: string; value: string }[]; installCommand?: string; buildCommand?: string }): Promise<any>
    listRevisions(deploymentId: string, limit?: number): Promise<any>
    getRevision(deploymentId: string, revisionId: string): Promise<any>
    getBuildLogs(projectId: string, revisionId: string, payload: Record<string, unknown>): Promise<any>
    getDeployLogs(projectId: string, payload: Record<string, unknown>, revisionId?: string): Promise<any>
  }
}

declare module '@langchain/langgraph-cli/dist/cli/utils/archive.mjs' {
  export function createArchive(configPath: string, options?: { onWarn?: (message: string) => void }): Promise<{ archivePath: string; fileSize: number; configRel: string; cleanup(): Promise<void> }>
}

declare module '@langchain/langgraph-cli/dist/cli/utils/deploy-helpers.mjs' {
  export function formatLogEntry(entry: { timestamp?: number | string; level?: string; message?: string }): string
}
