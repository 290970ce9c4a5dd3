/* A shared library that exports no function: load_library must refuse it. */
static int helper(int x) { return x + 1; }

__attribute__((visibility("hidden"))) int hidden_target(int x) {
  return helper(x);
}

int exported_counter = 0;
