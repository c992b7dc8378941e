! test_errstop_f - a failing call without ierr stops the program with the
! message (run and judged by test_errstop_f.sh).
program test_errstop_f
  use river
  implicit none
  call river_init()
  call river_log_set_level(99)   ! no ierr: must stop here
  print '(a)', 'NOT REACHED'
  call river_finalize()
end program test_errstop_f
