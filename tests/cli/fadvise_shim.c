/* A no-op posix_fadvise, for LD_PRELOAD: the shim a published MLPerf Storage submission shipped,
 * under which a dropped page cache is never dropped. ckptbench must flag a run that loads it. */
int posix_fadvise(int fd, long offset, long len, int advice) {
  (void)fd;
  (void)offset;
  (void)len;
  (void)advice;
  return 0;
}

int posix_fadvise64(int fd, long offset, long len, int advice) {
  return posix_fadvise(fd, offset, len, advice);
}
