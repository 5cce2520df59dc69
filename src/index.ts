// The in-process API: what a test suite imports to run hangar inside its own process.
export { startHangar, waitForRevision, type HangarTarget, type RunningHangar, type StartOptions, type WaitOptions } from './embed.js'
export { buildApp, type App, type AppOptions, type EmulatorParts } from './app.js'
export type { BusMessage, Topic, Topics } from './admin/bus.js'
export { Clock } from './clock.js'
export { checkConfig, ConfigError, defaultConfig, loadConfig, type Config } from './config.js'
export { VERSION } from './version.js'
