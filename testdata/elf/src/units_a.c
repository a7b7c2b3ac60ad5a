/* Two compilation units with globals in each (the global-variable index
   split between threads). */
int a_counter = 1;
static const char a_label[] = "first unit";
extern int b_total(void);

int main(void) { return a_counter + a_label[0] + b_total(); }
