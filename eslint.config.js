// The linter: `npm run lint`, and test/lint.test.ts runs it in `npm test`. ESLint's and
// typescript-eslint's recommended rules everywhere; for the server (src/) also the rules that need
// types and catch the async mistakes a server cannot afford (a promise nobody awaits, an async
// function where a callback's result is ignored, an await on something that is not a promise).
// No stylistic rules: the code keeps one style by hand (no semicolons, single quotes, 2 spaces).
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', '.tap/', 'coverage/', '.hangar/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore marks what is unused on purpose (a parameter an interface requires,
      // a field taken out of an object so the rest can be returned without it).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The tools are plain JavaScript, type-checked by tsc (tsconfig.tools.json), which already
    // refuses an undefined name, with Node's globals known; as typescript-eslint advises for TypeScript.
    files: ['**/*.mjs', '**/*.js'],
    rules: { 'no-undef': 'off' },
  },
  {
    // Tests read the JSON bodies of the API they check; the assertions are the check, and a type
    // for every body would write the response schemas a second time.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.build.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
)
