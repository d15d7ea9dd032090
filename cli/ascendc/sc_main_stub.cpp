// libsystemc's own main() refers to sc_main. Programs linking libsfumato_ascendc have their own
// main() (which wins), so this definition only satisfies that reference; it is never called.
extern "C" int sc_main(int, char**) { return 0; }
