#include <cstdio>
int main() { std::puts("graphguard: not built yet"); return 0; }
