! test_errstop_f - a failing call without ierr stops the job with the
! message said once (run and judged by test_errstop_f.sh): with no
! argument every rank fails; with argument R only rank R does, and the
! others wait in a barrier until the job ends.
program test_errstop_f
  use mpi_f08
  use river
  implicit none
  character(len=16) :: arg
  integer :: rank, only
  call river_init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  only = -1
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) only
  end if
  if (only < 0 .or. rank == only) call river_log_set_level(99)  ! stops here
  if (only < 0 .or. rank == only) print '(a)', 'NOT REACHED'
  call MPI_Barrier(MPI_COMM_WORLD)
  call river_finalize()
end program test_errstop_f
