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

// The doors to the two journals (src/journals/index.ts opens both). `(^|/)journal/` is the SQLite
// folder alone: pgjournal/ and journals/ do not match it.
const SQLITE_JOURNAL = {
  regex: '(^|/)journal/',
  message: 'the SQLite journal is reached through src/journals/index.js, its types are src/ports/',
};
const PG_JOURNAL = {
  regex: '(^|/)pgjournal/',
  message:
    'the PostgreSQL journal is reached through src/journals/index.js, its types are src/ports/',
};
// The SQLite journal's modules, and test/journal/'s helpers that hand out what they keep to
// themselves (a journal's raw connection, a plan written past the FileStore).
const SQLITE_JOURNAL_FROM_TESTS = {
  regex: '(^|/)journal/',
  message:
    "only test/journal/ tests the SQLite journal's own modules and uses its helpers: use src/journals/index.js, and test/sqliteFile.ts for the file",
};
const PG_JOURNAL_FROM_TESTS = {
  regex: '(^|/)src/pgjournal/',
  message: "only test/pg/ tests the PostgreSQL journal's own modules: use src/journals/index.js",
};
// test/journal/'s helpers (sqliteOf, planWriter, fixture) hold the SQLite journal's own modules.
const SQLITE_JOURNAL_TEST_HELPERS = {
  regex: '^(\\.\\.?/)+journal/',
  message:
    "test/journal/'s helpers are for the SQLite journal's own tests: seed through the ports, or read the file with test/sqliteFile.js",
};

/**
 * Test files that open both journals' own modules by design, as src/journals/ does for the code:
 * the conformance suite's subjects, the readers that compare the two schemas, and the SQLite file
 * read with plain SQL as the sqlite3 shell reads it.
 */
const TEST_BRIDGES = [
  'test/conformance/journals.ts',
  'test/schemaText.ts',
  'test/sqliteFile.ts',
  'test/pg/documentedViews.test.ts',
];

/**
 * The import rule with `patterns` refused, and better-sqlite3 unless `paths` says otherwise. One
 * object for every block: a later block's options replace an earlier one's for the same files.
 */
function restrictedImports(patterns, paths = [BETTER_SQLITE3]) {
  return {
    '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
    // The import rule does not see `await import(…)`: the same patterns, on the module named.
    'no-restricted-syntax': [
      'error',
      ...patterns.map(({ regex, message }) => ({
        selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`,
        message,
      })),
    ],
  };
}

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
    // Both journals' one door is src/journals/index.ts: the rest of src/ imports nothing of
    // src/journal/ or src/pgjournal/, types included (those are the ports', src/ports/).
    files: ['src/**/*.ts'],
    ignores: ['src/journal/**', 'src/pgjournal/**', 'src/journals/**'],
    rules: restrictedImports([SQLITE_JOURNAL, PG_JOURNAL]),
  },
  {
    // Neither journal imports the other.
    files: ['src/journal/**/*.ts'],
    ignores: ['src/journal/sqlite.ts'],
    rules: restrictedImports([PG_JOURNAL]),
  },
  {
    files: ['src/journal/sqlite.ts'],
    rules: restrictedImports([PG_JOURNAL], []),
  },
  {
    files: ['src/pgjournal/**/*.ts'],
    rules: restrictedImports([SQLITE_JOURNAL]),
  },
  {
    // A test of one journal's own modules lives in that journal's test folder (test/journal/,
    // test/pg/), and so do the helpers built on them; every other test reaches the journals
    // through src/journals/ and src/ports/. The files that still cross are listed: the list only
    // shrinks.
    files: ['test/**/*.ts'],
    ignores: ['test/journal/**', ...TEST_BRIDGES],
    rules: restrictedImports([
      SQLITE_JOURNAL_FROM_TESTS,
      SQLITE_JOURNAL_TEST_HELPERS,
      PG_JOURNAL_FROM_TESTS,
    ]),
  },
  {
    files: ['test/journal/**/*.ts'],
    ignores: [...TEST_BRIDGES],
    rules: restrictedImports([PG_JOURNAL_FROM_TESTS]),
  },
  {
    files: ['test/pg/**/*.ts'],
    ignores: [...TEST_BRIDGES],
    rules: restrictedImports([SQLITE_JOURNAL_FROM_TESTS, SQLITE_JOURNAL_TEST_HELPERS]),
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
