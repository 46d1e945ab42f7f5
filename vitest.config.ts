import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests spawn real processes and measure timing; keep files from competing for 2 cores.
    fileParallelism: false,
    // The soak test collects garbage before it measures memory, so that what it compares is what
    // is still referenced, not how far V8 happened to be from its next collection.
    execArgv: ['--expose-gc'],
  },
})
