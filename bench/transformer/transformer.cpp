// placeholder
int placeholder_unused_main_guard = 0;
