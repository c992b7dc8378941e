! hello_f - the Fortran twin of hello.c: start River (and MPI), log a
! line, stop. Without ierr a failing call would stop the program with its
! message; here the codes are checked, and a failure exits non-zero.
program hello_f
  use, intrinsic :: iso_fortran_env, only: error_unit
  use river
  implicit none
  integer :: ierr

  call river_init(ierr)                  ! starts MPI if you have not
  if (ierr /= RIVER_SUCCESS) then
    write (error_unit, '(2a)') 'river_init: ', river_strerror(ierr)
    error stop 1
  end if
  call river_log(RIVER_LOG_INFO, 'up')   ! "river[RANK] info: up"
  call river_finalize(ierr)              ! stops MPI only if River started it
  if (ierr /= RIVER_SUCCESS) then
    write (error_unit, '(2a)') 'river_finalize: ', river_strerror(ierr)
    error stop 1
  end if
end program hello_f
