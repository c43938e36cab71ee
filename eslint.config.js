// ESLint: typescript-eslint's type-checked rules on the code, Prettier's formatting left to
// Prettier (eslint-config-prettier), and a line-length limit that Prettier does not enforce on
// comments. `npm run lint` runs both; .ci/run runs it before the tests.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// better-sqlite3 is two packages, one per Node line (src/journal/sqlite.ts picks the one that
// runs): a value import of 'better-sqlite3' names the Node 22+ build, absent on Node 20.
const BETTER_SQLITE3 = {
  name: 'better-sqlite3',
  message: 'import Database from src/journal/sqlite.js (it loads the build for this Node)',
  allowTypeImports: true,
};

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'test/fixtures/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    ignores: ['src/http/assets/'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `_` names what is there but not used: a loop that only counts, a field left out of a rest.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // A caught value passed on as it came (`reject(err)` in a wrapper) is not a new rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // node:test's test() and describe() return promises the runner itself waits for.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: ['src/journal/sqlite.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [BETTER_SQLITE3] }] },
  },
  {
    // The journal's one door is src/journal/index.ts (issue 31): the rest of src/ imports nothing
    // else of src/journal/, types included. (A later block's options replace an earlier one's, so
    // this one repeats the better-sqlite3 rule.)
    files: ['src/**/*.ts'],
    ignores: ['src/journal/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [BETTER_SQLITE3],
          patterns: [
            {
              regex: '(^|/)journal/(?!index\\.js$)',
              message: 'the journal is reached through src/journal/index.js and its ports only',
            },
          ],
        },
      ],
    },
  },
  {
    // Functions that fit on a screen and files that can be read whole (issue 31); the journal's
    // migrations are long only because of their SQL.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60 }],
      'max-lines': ['error', { max: 400 }],
    },
  },
  {
    files: ['src/journal/migrations.ts', 'src/pgjournal/migrations.ts'],
    rules: { 'max-lines': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ignores: ['src/http/assets/'],
    languageOptions: { globals: globals.node },
  },
  {
    // The dashboard's script, run by the browser as served: checked against the DOM's types.
    files: ['src/http/assets/**/*.js', 'src/http/assets/**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { project: './tsconfig.browser.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  prettier,
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': [
        'error',
        {
          code: 100,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
        },
      ],
    },
  },
);
