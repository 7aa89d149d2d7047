/** Exit status of a process that cannot run against this database (sysexits' EX_CONFIG): not restarted. */
export const EXIT_CONFIG = 78;
