/* Driver of soft_path_cost.S: best of 9 interleaved runs, ns per event (see the .S). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
extern __thread char *tpos, *tend;
void loopA(long), loopB(long), loopC(long), loopD(long), loopE(long), loopF(long), loopG(long);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  long n = 30000000, chunk=8192; char *buf = aligned_alloc(4096, chunk*16+4096); memset(buf,0,chunk*16+4096);
  void (*f[])(long)={loopA,loopB,loopC,loopD,loopE,loopF,loopG}; const char*nm[]={"A call+xadd(now)","B tramp+xadd","C tramp+las","D bare call/ret","E nops","F tramp+rseqstore+las","G call+las"};
  double best[7]; for(int i=0;i<7;i++)best[i]=1e9;
  for(int r=0;r<9;r++) for(int i=0;i<7;i++){ 
    double t=now(); for(long k=0;k<n;k+=chunk){tpos=buf; tend=buf+chunk*16+64; f[i](chunk);} t=now()-t; if(t<best[i])best[i]=t;}
  for(int i=0;i<7;i++) printf("%-24s %.3f ns/event\n",nm[i],best[i]/n/2*1e9);
}
